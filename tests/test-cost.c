#include <math.h>
#include <string.h>

#include "io/profile_load.h"
#include "plan/estimate.h"
#include "plan/memory.h"
#include "plan/pipeline.h"
#include "plan/topology.h"
#include "plan/context_par.h"
#include "plan/tensor_par.h"
#include "fixtures.h"
#include "plan/wave_loss.h"
#include "testutil.h"

START_TEST(test_bubble)
{
	struct plan p;

	gpt3_plan(&p);
	/* m = 1536 / (16 x 1) = 96; (p - 1)/(v m) = 11/96 (SC21 Eq. 1). */
	ck_assert_int_eq(plan_microbatches(&p), 96);
	ck_assert_rel(pipeline_bubble_fraction(&p), 11.0 / 96.0, 1e-15);
	p.vpp = 2; /* Eq. 2: divided by v */
	ck_assert_rel(pipeline_bubble_fraction(&p), 11.0 / 192.0, 1e-15);
}
END_TEST

START_TEST(test_stored_microbatches)
{
	struct model m;
	struct plan p;

	test_load_model(&m, GPT3_YAML);
	gpt3_plan(&p);
	/* 96/12 = 8 layers x min(12, 96) micro-batches = 96 = L (Korthikanti 4.2.3). */
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 0), 96.0, 1e-15);
	p.vpp = 2; /* x (1 + 11/24) */
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 0), 96.0 * (1.0 + 11.0 / 24.0), 1e-15);
	/* Megatron's interleaved warm-up: stage i holds (v-1)p + 2(p-i-1) + 1
	 * chunks of L/(p v) = 4 layers. Stage 0: 12 + 22 + 1 = 35 chunks, 140
	 * (Korthikanti's figure above); the last stage: 12 + 0 + 1 = 13, 52. */
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 11), 52.0, 1e-15);
	/* At most m v chunks: with m = 4, 8 chunks of 4 layers. */
	p.global_batch = 64;
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 0), 32.0, 1e-15);
	p.global_batch = 1536;
	/* Chunks of unequal layers: 94 layers with the embedding and the loss
	 * counted in the split over 12 x 2 chunks, (94 + 2) / 24 = 4 a chunk,
	 * chunk 0 (stage 0's first) 3. Stage 0 holds chunks 0 (3 layers) and
	 * 12 (4): 7. Its 35 warm-up forwards run in groups of p = 12 a chunk
	 * (Megatron's schedules.py: forward k on chunk (k mod 24) div 12):
	 * 12 of chunk 0, 12 of chunk 12, 11 of chunk 0 again, so they hold
	 * 12 x 3 + 12 x 4 + 11 x 3 = 117 layer-micro-batches, not the
	 * 35 x 7 / 2 = 122.5 of chunks of the stage's average. */
	m.layers = 94;
	p.pp_split = PLAN_PP_SPLIT_EMBEDDING_LOSS;
	ck_assert_int_eq(plan_stage_layers(&p, &m, 0), 7);
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 0), 117.0, 1e-15);
	ck_assert_rel(pipeline_layer_microbatches(&m, &p, 0), 117.0 / 7.0, 1e-15);
	m.layers = 96;
	p.pp_split = PLAN_PP_SPLIT_EVEN;
	p.vpp = 1;
	p.global_batch = 64; /* m = 4 < p: only 4 in flight */
	ck_assert_rel(pipeline_stored_layer_microbatches(&m, &p, 0), 32.0, 1e-15);
}
END_TEST

START_TEST(test_layer_activations)
{
	struct model m;
	struct plan p;
	double sbh = 2048.0 * 1 * 12288;

	test_load_model(&m, GPT3_YAML);
	gpt3_plan(&p);
	p.recompute = PLAN_RECOMPUTE_NONE;
	/* Korthikanti Table 2, TP without SP: sbh (10 + 24/t + 5 a s/(h t))
	 * = 25,165,824 x (10 + 3 + 10) = 578,813,952 bytes. */
	ck_assert_rel(memory_layer_activations(&m, &p, NULL), sbh * 23.0, 1e-12);
	/* TP + SP: sbh/t (34 + 5 a s / h) = sbh/8 x 114. */
	p.sequence_parallel = true;
	ck_assert_rel(memory_layer_activations(&m, &p, NULL), sbh / 8 * 114.0, 1e-12);
	/* TP + SP + selective: 34 sbh / t = 106,954,752 bytes. */
	p.recompute = PLAN_RECOMPUTE_SELECTIVE;
	ck_assert_rel(memory_layer_activations(&m, &p, NULL), 34.0 * sbh / 8, 1e-12);
	/* Full recompute keeps the layer input: 2 sbh (without SP). */
	p.sequence_parallel = false;
	p.recompute = PLAN_RECOMPUTE_FULL;
	ck_assert_rel(memory_layer_activations(&m, &p, NULL), 2.0 * sbh, 1e-12);
}
END_TEST

/* torchtitan's per-op selective checkpointing (framework
 * selective_recompute op) on one sequence of 1,024 tokens, flash
 * attention, tp = pp = 1 over @dp ranks. */
static void
op_sac_plan(struct plan *p, struct framework *fw, int dp)
{
	plan_init(p);
	p->tp = p->pp = p->micro_batch = p->global_batch = 1;
	p->dp = dp;
	p->seq_len = 1024;
	p->flash_attention = true;
	p->recompute = PLAN_RECOMPUTE_SELECTIVE;
	framework_init_default(fw);
	fw->selective_recompute = FRAMEWORK_SAC_OP;
}

/*
 * torchtitan's per-op selective checkpointing keeps a layer's input, the
 * outputs of q, v, w1 and w2 (every second matmul is recomputed), the
 * attention kernel's output and, with SP, the reduce-scatters' outputs.
 * A toy Llama layer, h 1024, 8 heads of 128, 2 KV heads (kvd 256), SwiGLU
 * 2816; s 1024, b 1:
 *   t 1: input 2 x 2^20 = 2,097,152; q, v, attention out, w1:
 *   2 x 1024 x (1024 + 256 + 1024 + 2816) = 10,485,760; w2's output
 *   2,097,152: 14,680,064 bytes.
 *   t 2 with SP: input 1,048,576; the split ones 5,242,880; w2 2,097,152
 *   (a full partial sum on every rank); two reduce-scatters 2 x 2 x 2^20 /
 *   2 = 2,097,152: 10,485,760 bytes.
 */
START_TEST(test_layer_activations_op_sac)
{
	struct model m;
	struct plan p;
	struct framework fw;

	test_load_model(&m, FIXTURE_TOY_LLAMA_YAML);
	op_sac_plan(&p, &fw, 1);
	ck_assert_rel(memory_layer_activations(&m, &p, &fw), 14680064.0, 1e-12);
	p.tp = 2;
	p.sequence_parallel = true;
	ck_assert_rel(memory_layer_activations(&m, &p, &fw), 10485760.0, 1e-12);
	/* Less than Korthikanti's selective, which keeps every intermediate. */
	ck_assert(memory_layer_activations(&m, &p, &fw) < memory_layer_activations(&m, &p, NULL));
}
END_TEST

/*
 * torchtitan's op SAC on MLA and MoE layers (memory.c,
 * layer_activations_op_sac): every odd aten.mm output of the block, the
 * attention output and the all-to-alls' outputs; the experts' grouped
 * GEMMs are recomputed. 2 layers, the first dense (frac 1/2), h 1024,
 * 8 heads, MLA with q_lora_rank 0, kv_lora_rank 256, nope 64, rope 32,
 * v 64; a gated MLP of 2816; 8 experts, top-2, expert FFN 512, one shared
 * expert; s 1024, b 1, t 1 (sb 1024). Input 2 x 1024 x 1024 = 2,097,152.
 * Attention: wq (#1) 8 x 96 = 768, wkv_a (#2) no, wkv_b (#3)
 * 8 x (64 + 64) = 1024, wo (#4) no, the kernel's output 8 x 64 = 512:
 * 2304 wide. Dense MLP: w1 (#5) 2816, w3 (#6) no, w2 (#7) 1024: 3840.
 * MoE: the gate (#5) 8, shared w1 (#6) no, w3 (#7) 512, w2 (#8) no: 520.
 * 2,097,152 + 2 x 1024 x (2304 + 3840 / 2 + 520 / 2) = 11,280,384 bytes.
 * EP 2 adds the two all-to-alls' 2 x 2 x 1024 = 4096 wide on the MoE
 * layer: + 2048 x 4096 / 2 = 15,474,688. With q_lora_rank 128 (EP 1):
 * wq_a (#1) 128, wq_b (#2) no, wkv_a (#3) 256 + 32, wkv_b (#4) no, wo
 * (#5) 1024, output 512: 1952; dense w1 (#6) no, w3 (#7) 2816, w2 (#8)
 * no; MoE gate (#6) no, shared w1 (#7) 512, w3 (#8) no, w2 (#9) 1024:
 * 2,097,152 + 2048 x (1952 + 2816 / 2 + 1536 / 2) = 10,551,296.
 */
START_TEST(test_layer_activations_op_sac_mla_moe)
{
	static const char *yaml =
		"name: l\nlayers: 2\nhidden: 1024\nheads: 8\nffn_hidden: 2816\ngated_mlp: true\n"
		"vocab: 32768\nseq_len: 1024\nattention: mla\n"
		"mla: {q_lora_rank: %d, kv_lora_rank: 256, qk_nope_head_dim: 64, qk_rope_head_dim: 32, "
		"v_head_dim: 64}\nmoe: {experts: 8, top_k: 2, expert_ffn_hidden: 512, shared_experts: 1, "
		"first_dense_layers: 1}\n";
	char buf[512];
	struct model m;
	struct plan p;
	struct framework fw;

	snprintf(buf, sizeof buf, yaml, 0);
	test_load_model(&m, buf);
	op_sac_plan(&p, &fw, 2);
	ck_assert_rel(memory_layer_activations(&m, &p, &fw), 11280384.0, 1e-12);
	p.ep = 2;
	ck_assert_rel(memory_layer_activations(&m, &p, &fw), 15474688.0, 1e-12);
	p.ep = 1;
	snprintf(buf, sizeof buf, yaml, 128);
	test_load_model(&m, buf);
	ck_assert_rel(memory_layer_activations(&m, &p, &fw), 10551296.0, 1e-12);
	/* Less than Korthikanti's selective, which keeps the experts' rows. */
	ck_assert(memory_layer_activations(&m, &p, &fw) < memory_layer_activations(&m, &p, NULL));
}
END_TEST

/* What a layer keeps when the heads do not tile the hidden size, and for
 * multi-head latent attention; flash attention (no s^2 terms), TP 2
 * without SP, s 1024, b 1, an MLP of 4 x 4096 (sb = 1024). */
START_TEST(test_layer_activations_head_shapes)
{
	struct model m;
	struct plan p;

	plan_init(&p);
	p.tp = 2;
	p.pp = p.dp = p.micro_batch = 1;
	p.global_batch = 1;
	p.seq_len = 1024;
	p.flash_attention = true;
	p.recompute = PLAN_RECOMPUTE_NONE;
	/* GQA with head_dim 256 on h 1024, 8 heads, 2 KV heads: Q and the
	 * projection input 2 x 2sb x 2048, K and V 2sb x 512 each:
	 * 2 x 1024 x (2048 + 2048 + 1024) = 10,485,760; MLP 4 x 1024 x 4096
	 * = 16,777,216; the norms' 10 sbh = 10,485,760 whole.
	 * 10,485,760 + (10,485,760 + 16,777,216) / 2 = 24,117,248 bytes. */
	test_load_model(&m, "name: g\nlayers: 2\nhidden: 1024\nheads: 8\nkv_heads: 2\nhead_dim: 256\n"
			    "ffn_hidden: 4096\nvocab: 1000\nseq_len: 1024\n");
	ck_assert_rel(memory_layer_activations(&m, &p, NULL), 24117248.0, 1e-12);
	/* Without dropout (p = 0: NeMo's Llama and Nemotron configs) the two
	 * masks of 1 byte, s b h each, are not kept: 24,117,248 - 2 x 1024 x
	 * 1024 = 22,020,096. Unfused attention keeps 5 a s^2 b / t with
	 * dropout (softmax output 2, mask 1, dropout output 2), 2 without:
	 * 3 x 8 x 1024^2 / 2 = 12,582,912 bytes fewer besides. */
	{
		struct model md;

		test_load_model(&md, "name: g\nlayers: 2\nhidden: 1024\nheads: 8\nkv_heads: 2\nhead_dim: 256\n"
				     "ffn_hidden: 4096\nvocab: 1000\nseq_len: 1024\ndropout: false\n");
		ck_assert_rel(memory_layer_activations(&md, &p, NULL), 22020096.0, 1e-12);
		p.flash_attention = false;
		ck_assert_rel(memory_layer_activations(&m, &p, NULL) - memory_layer_activations(&md, &p, NULL),
			      2097152.0 + 12582912.0, 1e-12);
		p.flash_attention = true;
	}
	/* MLA (DeepSeek-V2's layout), 8 heads, d_nope 64, d_rope 32, d_v 64,
	 * q_lora_rank 256, kv_lora_rank 128. Split across TP: Q and K
	 * 8 x 96 each, V and the projection input 8 x 64 each:
	 * 2sb x 8 x (192 + 128) = 5,242,880. On every rank: c_Q before and
	 * after its norm (2 x 256), c_KV (2 x 128) and the rope key (32):
	 * 2sb x 800 = 1,638,400. 10,485,760 + 1,638,400
	 * + (5,242,880 + 16,777,216) / 2 = 23,134,208 bytes. */
	test_load_model(&m, "name: l\nlayers: 2\nhidden: 1024\nheads: 8\nffn_hidden: 4096\nvocab: 1000\n"
			    "seq_len: 1024\nattention: mla\n"
			    "mla: {q_lora_rank: 256, kv_lora_rank: 128, qk_nope_head_dim: 64, "
			    "qk_rope_head_dim: 32, v_head_dim: 64}\n");
	ck_assert_rel(memory_layer_activations(&m, &p, NULL), 23134208.0, 1e-12);
	/* Sequence parallelism divides the norms' part, not the latents:
	 * 10,485,760 / 2 + 1,638,400 + 11,010,048 = 17,891,328. */
	p.sequence_parallel = true;
	ck_assert_rel(memory_layer_activations(&m, &p, NULL), 17891328.0, 1e-12);
}
END_TEST

START_TEST(test_zero_memory)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct memory_use u;
	const double psi = 7.5e9;
	/* ZeRO paper Fig. 1: Psi = 7.5 B, N_d = 64: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB. */
	const double expect[4] = { 16 * psi, 4 * psi + 12 * psi / 64, 2 * psi + 14 * psi / 64, 16 * psi / 64 };

	fixture_gpt3_dp64(&c, &m, &p, 0);
	for (int z = 0; z <= 3; z++) {
		p.zero = z;
		memory_stage(&m, &p, &c, NULL, 0, psi, 0.0, &u);
		ck_assert_rel(u.weights + u.gradients + u.optimizer, expect[z], 1e-12);
	}
	ck_assert_rel(expect[1], 31.40625e9, 1e-12);
	cluster_release(&c);
}
END_TEST

/*
 * NeMo 1.x's distributed_fused_adam (NeMo 24.07 launcher scripts,
 * frameworks/nemo-24.07.yaml): megatron_base_model.py's
 * setup_optimization() keeps fp32 moments and, beside a bf16 model,
 * only the 16 low bits of the fp32 master (store_param_remainders:
 * apex distributed_fused_adam.py, an int16 shard): 4 + 4 + 2 = 10 bytes a
 * parameter, sharded; the contiguous gradient buffer is grad_sync_dtype,
 * bf16 in NVIDIA's FP8 performance scripts: 2 bytes, whole.
 * Psi = 7.5 B on N_d = 64, ZeRO 1: 2 Psi + 2 Psi + 10 Psi / 64 =
 * 15e9 + 15e9 + 1.171875e9 = 31.171875e9 B (12 and 4 bytes: 31.40625e9,
 * test_zero_memory).
 */
START_TEST(test_optimizer_bytes)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct memory_use u;
	struct framework fw;
	const double psi = 7.5e9;

	fixture_gpt3_dp64(&c, &m, &p, 1);
	framework_init_default(&fw);
	ck_assert_double_eq(fw.optimizer_bytes, 12.0);
	fw.reduce_bytes = 4.0;
	memory_stage(&m, &p, &c, &fw, 0, psi, 0.0, &u);
	ck_assert_rel(u.weights + u.gradients + u.optimizer, 2 * psi + 4 * psi + 12 * psi / 64, 1e-12);
	fw.reduce_bytes = 2.0;
	fw.optimizer_bytes = 10.0;
	memory_stage(&m, &p, &c, &fw, 0, psi, 0.0, &u);
	ck_assert_rel(u.optimizer, 1.171875e9, 1e-12);
	ck_assert_rel(u.weights + u.gradients + u.optimizer, 31.171875e9, 1e-12);
	/* ZeRO 0 keeps the whole state: 10 Psi. */
	p.zero = 0;
	memory_stage(&m, &p, &c, &fw, 0, psi, 0.0, &u);
	ck_assert_rel(u.optimizer, 75e9, 1e-12);
	cluster_release(&c);
}
END_TEST

/*
 * Activation offloading (--activation-offload-layers; Transformer Engine's
 * CPU offloading: at most model_layers - num_layers sets of activations
 * on the GPU). GPT-3 175B at tp 1, pp 1, one micro-batch of 2048 tokens
 * with fused attention keeps Korthikanti's 34 s b h a layer: 34 x 2048 x
 * 12288 = 855,638,016 bytes; 10 layers offloaded keep 8,556,380,160 bytes
 * fewer. Each way the copy takes 8,556,380,160 / B: hidden at the
 * test cluster's 25 GB/s default (0.34 s against a forward of seconds),
 * exposed at 1 GB/s (8.56 s, more than the forward and the backward of the
 * one micro-batch), where the term is 2 x 8.55638016 s less the
 * micro-batch's computation (compute). Refused with pp 2 and with
 * recomputation, as Megatron-Core refuses them.
 */
START_TEST(test_activation_offload)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct estimate e0, e1;
	struct plan_error err;

	fixture_gpt3_dp64(&c, &m, &p, 1);
	p.flash_attention = true;
	ck_assert_rel(memory_layer_activations(&m, &p, NULL), 855638016.0, 1e-12);
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e0, &err), "%s", err.message);
	p.activation_offload_layers = 10;
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e1, &err), "%s", err.message);
	ck_assert_rel(e0.memory.activations - e1.memory.activations, 8556380160.0, 1e-9);
	ck_assert_double_eq(e1.breakdown.offload, 0.0);
	ck_assert_rel(e1.iteration_time_s, e0.iteration_time_s, 1e-12);
	c.pcie_bandwidth_Bps = 1e9;
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e1, &err), "%s", err.message);
	ck_assert_rel(e1.breakdown.offload, 2.0 * 8.55638016 - e1.breakdown.compute, 1e-9);
	p.pp = 2;
	p.dp = 32;
	ck_assert(!estimate_plan(&m, &c, &p, NULL, &e1, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "needs pp 1"));
	p.pp = 1;
	p.dp = 64;
	p.recompute = PLAN_RECOMPUTE_SELECTIVE;
	ck_assert(!estimate_plan(&m, &c, &p, NULL, &e1, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "does not combine with recomputation"));
	p.recompute = PLAN_RECOMPUTE_NONE;
	p.activation_offload_layers = 96;
	ck_assert(!estimate_plan(&m, &c, &p, NULL, &e1, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "fewer layers than the model's 96"));
	cluster_release(&c);
}
END_TEST

/*
 * Megatron-FSDP's --fsdp-double-buffer (framework fsdp_double_buffer;
 * Megatron-Core 0.14 megatron/core/distributed/fsdp/src/megatron_fsdp/
 * param_and_grad_buffer.py: weight_alloc and main_grad_alloc, two units
 * each) keeps two unsharded gradient units for good beside ZeRO-3's two
 * gathered parameter units. GPT-3's layer (biases, two LayerNorms):
 * 12 h^2 + 13 h = 12 x 150,994,944 + 13 x 12,288 = 1,812,099,072
 * parameters. With bf16 main grads (reduce_bytes 2) and tp 1 the two
 * units add 2 x 2 x 1,812,099,072 = 7,248,396,288 bytes to "other";
 * with fp32 ones (4) twice that, 14,496,792,576. The sharded states do
 * not change.
 */
START_TEST(test_fsdp_double_buffer)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct memory_use off, on;
	struct framework fw;
	const double psi = 7.5e9;

	fixture_gpt3_dp64(&c, &m, &p, 3);
	ck_assert_rel(model_params_per_layer(&m), 1812099072.0, 1e-12);
	test_load_framework(&fw, "name: mf\nreduce_bytes: 2\n");
	ck_assert(!fw.fsdp_double_buffer);
	memory_stage(&m, &p, &c, &fw, 0, psi, 0.0, &off);
	test_load_framework(&fw, "name: mf\nreduce_bytes: 2\nfsdp_double_buffer: true\n");
	ck_assert(fw.fsdp_double_buffer);
	memory_stage(&m, &p, &c, &fw, 0, psi, 0.0, &on);
	ck_assert_rel(on.other - off.other, 7248396288.0, 1e-9);
	ck_assert_rel(on.weights + on.gradients + on.optimizer, off.weights + off.gradients + off.optimizer, 1e-12);
	fw.reduce_bytes = 4.0;
	memory_stage(&m, &p, &c, &fw, 0, psi, 0.0, &on);
	ck_assert_rel(on.other - off.other, 14496792576.0, 1e-9);
	/* Below ZeRO-3 nothing is gathered unit by unit: no buffers. */
	p.zero = 1;
	memory_stage(&m, &p, &c, &fw, 0, psi, 0.0, &on);
	fw.fsdp_double_buffer = false;
	memory_stage(&m, &p, &c, &fw, 0, psi, 0.0, &off);
	ck_assert_double_eq(on.other, off.other);
	cluster_release(&c);
}
END_TEST

/* "other" of @p's stage 0 under the framework of @yaml (7.5e9 parameters),
 * its model states in @states. */
static double
zero3_other(const struct model *m, const struct plan *p, const struct cluster *c, const char *yaml,
	    double *states)
{
	struct framework fw;
	struct memory_use u;

	test_load_framework(&fw, yaml);
	memory_stage(m, p, c, &fw, 0, 7.5e9, 0.0, &u);
	if (states)
		*states = u.weights + u.gradients + u.optimizer;
	return u.other;
}

/*
 * plan-cli reviewmem: PyTorch FSDP's ZeRO-3 (master_weights_only) holds,
 * beside the two gathered layers (2 x 2 bytes a parameter), the
 * unsharded gradients of one in 16 bits (2) and, with a wider reduction,
 * FSDP2's held reduce-scatter input in it (foreach_reduce,
 * _fsdp_collectives.py); a framework without master_weights_only the two
 * layers alone, 2 x 2 L.
 * GPT-3's layer is L = 1,812,099,072 parameters (test_fsdp_double_buffer),
 * tp 1: bf16 reduction (2 x 2 + 2) L = 10,872,594,432 bytes, fp32
 * (2 x 2 + 2 + 4) L = 18,120,990,720, 4 L = 7,248,396,288 more; the
 * generic fp32 framework 2 x 2 L = 7,248,396,288.
 * DeepSpeed's IPG bucket (grad_bucket_buffers 1, grad_bucket 5e8,
 * reduce_bytes 2) takes the gradients instead: 2 x 2 L = 7,248,396,288
 * and the bucket's 5e8 x 2 = 1e9, 10,872,594,432 - 8,248,396,288 =
 * 2,624,198,144 below the bf16 FSDP figure. Below ZeRO-3 only the bucket
 * is left (ZeRO-1/2's IPG buffer through the backward): 1e9 at ZeRO-1,
 * 2e9 with two buffers; without the ZeRO optimizer (stage 0) nothing.
 */
START_TEST(test_zero3_layer_grads)
{
	static const char bf16[] = "name: a\nreduce_bytes: 2\nmaster_weights_only: true\n";
	static const char fp32[] = "name: b\nreduce_bytes: 4\nmaster_weights_only: true\n";
	static const char generic[] = "name: g\nreduce_bytes: 4\n";
	static const char ds[] = "name: d\nreduce_bytes: 2\ngrad_bucket: 5e8\ngrad_bucket_buffers: 1\n";
	static const char ds2[] = "name: d\nreduce_bytes: 2\ngrad_bucket: 5e8\ngrad_bucket_buffers: 2\n";
	struct cluster c;
	struct model m;
	struct plan p;
	double base;

	fixture_gpt3_dp64(&c, &m, &p, 3);
	base = c.gpu.reserved_bytes;
	ck_assert_rel(zero3_other(&m, &p, &c, bf16, NULL) - base, 10872594432.0, 1e-12);
	ck_assert_rel(zero3_other(&m, &p, &c, fp32, NULL) - base, 18120990720.0, 1e-12);
	ck_assert_rel(zero3_other(&m, &p, &c, generic, NULL) - base, 7248396288.0, 1e-12);
	ck_assert_rel(zero3_other(&m, &p, &c, bf16, NULL) - zero3_other(&m, &p, &c, ds, NULL), 2624198144.0, 1e-9);
	p.zero = 1;
	ck_assert_double_eq(zero3_other(&m, &p, &c, fp32, NULL), base);
	ck_assert_rel(zero3_other(&m, &p, &c, ds, NULL) - base, 1e9, 1e-12);
	ck_assert_rel(zero3_other(&m, &p, &c, ds2, NULL) - base, 2e9, 1e-12);
	p.zero = 0;
	ck_assert_double_eq(zero3_other(&m, &p, &c, ds, NULL), base);
	cluster_release(&c);
}
END_TEST

/*
 * plan-cli ubuf: Transformer Engine's Userbuffers under TP overlap, one
 * buffer of [s b / cp, h] a communicator (memory_userbuffers_bytes).
 * Llama 3.1 405B's shape, s 8192, b 1, h 16384: 8192 x 16384 =
 * 134,217,728 elements. TE v2.18's 12 (8 all-gathers, 4 reduce-scatters)
 * in bf16: 12 x 2 x 134,217,728 = 3,221,225,472 bytes (3 GiB); in fp8 the
 * all-gathers take 1 byte: (8 x 1 + 4 x 2) x 134,217,728 = 16 x
 * 134,217,728 = 2,147,483,648 (2 GiB: 8 x 128 MiB + 4 x 256 MiB). fp8
 * with bf16 first layers adds the bf16 set: 2 GiB + 3 GiB =
 * 5,368,709,120. TE 1.x's 10 (6 + 4) in fp8: 14 x 134,217,728 =
 * 1,879,048,192. fp4 runs TE's NONE mode: bf16, 3 GiB. CP-local plan,
 * s 4096 (cp 2): half, 1,073,741,824 in fp8. 0 at tp 1, without SP,
 * without --tp-overlap, and for a framework without Userbuffers.
 * memory_stage adds it to the total once.
 */
START_TEST(test_userbuffers)
{
	static const char te2[] = "name: t\nuserbuffers_allgather: 8\nuserbuffers_reduce_scatter: 4\n";
	static const char te1[] = "name: o\nuserbuffers_allgather: 6\nuserbuffers_reduce_scatter: 4\n";
	struct framework fw, old, none;
	struct cluster c;
	struct model m;
	struct plan p;
	struct memory_use u;

	fixture_gpt3_dp64(&c, &m, &p, 1);
	test_load_framework(&fw, te2);
	test_load_framework(&old, te1);
	framework_init_default(&none);
	m.hidden = 16384;
	p.seq_len = 8192;
	p.micro_batch = 1;
	p.tp = 8;
	p.sequence_parallel = true;
	p.tp_overlap = true;
	p.precision = PLAN_PRECISION_BF16;
	ck_assert_rel(memory_userbuffers_bytes(&m, &p, &fw), 3221225472.0, 1e-12);
	p.precision = PLAN_PRECISION_FP8;
	ck_assert_rel(memory_userbuffers_bytes(&m, &p, &fw), 2147483648.0, 1e-12);
	ck_assert_rel(memory_userbuffers_bytes(&m, &p, &old), 1879048192.0, 1e-12);
	ck_assert_double_eq(memory_userbuffers_bytes(&m, &p, &none), 0.0);
	ck_assert_double_eq(memory_userbuffers_bytes(&m, &p, NULL), 0.0);
	p.bf16_first_layers = 1;
	ck_assert_rel(memory_userbuffers_bytes(&m, &p, &fw), 5368709120.0, 1e-12);
	p.bf16_first_layers = 0;
	p.precision = PLAN_PRECISION_FP4;
	ck_assert_rel(memory_userbuffers_bytes(&m, &p, &fw), 3221225472.0, 1e-12);
	p.precision = PLAN_PRECISION_FP8;
	p.seq_len = 4096;
	ck_assert_rel(memory_userbuffers_bytes(&m, &p, &fw), 1073741824.0, 1e-12);
	memory_stage(&m, &p, &c, &fw, 0, 7.5e9, 0.0, &u);
	ck_assert_rel(u.userbuffers, 1073741824.0, 1e-12);
	ck_assert_rel(u.total - (u.weights + u.gradients + u.optimizer + u.activations + u.other), 1073741824.0,
		      1e-9);
	p.tp_overlap = false;
	ck_assert_double_eq(memory_userbuffers_bytes(&m, &p, &fw), 0.0);
	p.tp_overlap = true;
	p.sequence_parallel = false;
	ck_assert_double_eq(memory_userbuffers_bytes(&m, &p, &fw), 0.0);
	p.sequence_parallel = true;
	p.tp = 1;
	ck_assert_double_eq(memory_userbuffers_bytes(&m, &p, &fw), 0.0);
	cluster_release(&c);
}
END_TEST

/*
 * plan-cli ubrs: a reduce-scatter run by ring exchange registers 2t - 1
 * chunks of a t-th of [s b / cp, h] (TE v2.18 comm_gemm_overlap.cpp
 * l. 813-821). Megatron-Bridge's userbuffers_fp8_b200_h16384_tp4_cp2
 * preset: 8 all-gathers, 4 reduce-scatters of which 2 (proj_fprop,
 * fc2_fprop) ring exchange. E = 8192 x 16384 = 134,217,728 elements.
 * fp8, tp 4: all-gathers 8 x 1 x E = 8E; bulk reduce-scatters 2 x 2 x E
 * = 4E; ring ones 2 x 7/4 x 2 x E = 7E; 19E = 2,550,136,832 bytes (all
 * pipelined: 16E, so + 3E = 402,653,184, 384 MiB). bf16, tp 8: 8 x 2E
 * + 2 x 2E + 2 x 15/8 x 2E = 16E + 4E + 7.5E = 27.5E = 3,690,987,520.
 * fp8 tp 4 with bf16 first layers adds the bf16 set, ring ones too:
 * (8 + 2 + 3.5) x 2E = 27E; 46E = 6,174,015,488. 4 of 4 ring at tp 2:
 * fp8 8E + 4 x 3/2 x 2E = 20E = 2,684,354,560.
 */
START_TEST(test_userbuffers_ring_exchange)
{
	static const char bridge[] = "name: t\nuserbuffers_allgather: 8\nuserbuffers_reduce_scatter: 4\n"
				     "userbuffers_reduce_scatter_ring_exchange: 2\n";
	static const char all[] = "name: a\nuserbuffers_allgather: 8\nuserbuffers_reduce_scatter: 4\n"
				  "userbuffers_reduce_scatter_ring_exchange: 4\n";
	struct framework fw, ring4;
	struct cluster c;
	struct model m;
	struct plan p;

	fixture_gpt3_dp64(&c, &m, &p, 1);
	test_load_framework(&fw, bridge);
	test_load_framework(&ring4, all);
	m.hidden = 16384;
	p.seq_len = 8192;
	p.micro_batch = 1;
	p.sequence_parallel = true;
	p.tp_overlap = true;
	p.tp = 4;
	p.precision = PLAN_PRECISION_FP8;
	ck_assert_rel(memory_userbuffers_bytes(&m, &p, &fw), 2550136832.0, 1e-12);
	p.tp = 8;
	p.precision = PLAN_PRECISION_BF16;
	ck_assert_rel(memory_userbuffers_bytes(&m, &p, &fw), 3690987520.0, 1e-12);
	p.tp = 4;
	p.precision = PLAN_PRECISION_FP8;
	p.bf16_first_layers = 1;
	ck_assert_rel(memory_userbuffers_bytes(&m, &p, &fw), 6174015488.0, 1e-12);
	p.bf16_first_layers = 0;
	p.tp = 2;
	ck_assert_rel(memory_userbuffers_bytes(&m, &p, &ring4), 2684354560.0, 1e-12);
	cluster_release(&c);
}
END_TEST

/*
 * plan-cli reviewmem: the loss's stage keeps (4 s b h + L s b V) / t of
 * logits and loss, L = loss_logit_memory (default 4, Korthikanti et al.
 * Sec. 4.3; torchtitan's eager F.cross_entropy(pred.float()) 12).
 * GPT-3 on one stage (it holds the loss), s 2048, b 1, t 1, V 51,200:
 * 4 x 2048 x 12288 + 4 x 2048 x 51200 = 100,663,296 + 419,430,400 =
 * 520,093,696 bytes at the default; at 12 the logits' part triples,
 * 8 x 2048 x 51200 = 838,860,800 more. At tp 2 half of each.
 */
START_TEST(test_loss_logit_memory)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct framework fw;
	struct memory_use four, twelve;

	fixture_gpt3_dp64(&c, &m, &p, 1);
	framework_init_default(&fw);
	ck_assert_double_eq(fw.loss_logit_memory, 4.0);
	test_load_framework(&fw, "name: l\n");
	ck_assert_double_eq(fw.loss_logit_memory, 4.0);
	memory_stage(&m, &p, &c, &fw, 0, 7.5e9, 0.0, &four);
	fw.loss_logit_memory = 12.0;
	memory_stage(&m, &p, &c, &fw, 0, 7.5e9, 0.0, &twelve);
	ck_assert_rel(twelve.activations - four.activations, 838860800.0, 1e-12);
	ck_assert_double_eq(twelve.other, four.other);
	fw.loss_logit_memory = 0.0;
	memory_stage(&m, &p, &c, &fw, 0, 7.5e9, 0.0, &twelve);
	ck_assert_rel(four.activations - twelve.activations, 419430400.0, 1e-12);
	p.tp = 2;
	p.dp = 32;
	memory_stage(&m, &p, &c, &fw, 0, 7.5e9, 0.0, &twelve);
	fw.loss_logit_memory = 12.0;
	memory_stage(&m, &p, &c, &fw, 0, 7.5e9, 0.0, &four);
	ck_assert_rel(four.activations - twelve.activations, 12.0 * 2048 * 51200 / 2, 1e-12);
	cluster_release(&c);
}
END_TEST

/*
 * plan-cli memloss: Megatron's loss peaks at 6 bytes a logit (the fp32
 * copy beside the bf16 logits in the forward, the fp32 gradient beside
 * its bf16 cast in the backward; megatron/core/tensor_parallel/
 * cross_entropy.py), so the bundled Megatron and NeMo 1.x profiles say
 * 6; nemo (Megatron-Bridge's providers mix the te loss, 2, and the
 * native one, 6) keeps the default 4 and pytorch-fsdp2 its 12.
 * GPT-3 on one stage, s 2048, b 1, t 1, V 51,200: the loss's bytes are
 * 4 x 2048 x 12288 + 6 x 2048 x 51200 = 100,663,296 + 629,145,600 =
 * 729,808,896, 2 x 2048 x 51200 = 209,715,200 more than at 4.
 */
START_TEST(test_loss_logit_memory_megatron)
{
	static const struct {
		const char *file;
		double bytes;
	} cases[] = {
		{ "megatron-lm", 6.0 },	     { "megatron-core-0.6", 6.0 },
		{ "megatron-core-0.6-sequential", 6.0 },
		{ "megatron-fsdp", 6.0 },    { "megatron-lm-2021", 6.0 },
		{ "nemo-24.07", 6.0 },	     { "nemo", 4.0 },
		{ "pytorch-fsdp2", 12.0 },
	};
	const char *root = getenv("PLAN_TEST_SOURCE_ROOT");
	struct cluster c;
	struct model m;
	struct plan p;
	struct framework fw;
	struct plan_error err;
	struct memory_use four, six;
	char path[4096];

	ck_assert_msg(root != NULL, "PLAN_TEST_SOURCE_ROOT is not set (run through meson test)");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(path, sizeof(path), "%s/frameworks/%s.yaml", root, cases[i].file);
		ck_assert_msg(framework_load_file(&fw, path, &err), "%s", err.message);
		ck_assert_msg(fw.loss_logit_memory == cases[i].bytes, "%s: %g", cases[i].file,
			      fw.loss_logit_memory);
	}
	fixture_gpt3_dp64(&c, &m, &p, 1);
	test_load_framework(&fw, "name: l\n");
	memory_stage(&m, &p, &c, &fw, 0, 7.5e9, 0.0, &four);
	test_load_framework(&fw, "name: l\nloss_logit_memory: 6\n");
	memory_stage(&m, &p, &c, &fw, 0, 7.5e9, 0.0, &six);
	ck_assert_rel(six.activations - four.activations, 209715200.0, 1e-12);
	ck_assert_double_eq(six.other, four.other);
	fw.loss_logit_memory = 0.0;
	memory_stage(&m, &p, &c, &fw, 0, 7.5e9, 0.0, &four);
	ck_assert_rel(six.activations - four.activations, 729808896.0 - 100663296.0, 1e-12);
	cluster_release(&c);
}
END_TEST

/*
 * plan-cli zero3: a framework that gathers tensor by tensor
 * (gather_unit tensor, DeepSpeed v0.3.13's fetch_sub_module) holds one
 * weight matrix gathered, not two layers: GPT-3's largest matrix is an
 * MLP one, h x 4h = 4 x 150,994,944 = 603,979,776 elements (the fused
 * QKV is 3 h^2, 452,984,832). Without prefetch, 2 bytes x 603,979,776 =
 * 1,207,959,552 bytes, and with zero3_grad_copies 3 unsharded fp16
 * gradients of it, 3 x 2 x 603,979,776 = 3,623,878,656 more: 4,831,838,208
 * bytes in place of the layer path's 2 x 2 x 1,812,099,072 =
 * 7,248,396,288, i.e. 2,416,558,080 fewer. A tensor-unit framework that
 * prefetches holds two weights: 1,207,959,552 more than without. Below
 * ZeRO-3 nothing is gathered: the same for both.
 */
START_TEST(test_zero3_tensor_unit_memory)
{
	static const char layer_yaml[] = "name: l\nprefetch: none\n";
	static const char tensor_yaml[] = "name: t\ngather_unit: tensor\nprefetch: none\nzero3_grad_copies: 3\n";
	struct cluster c;
	struct model m;
	struct plan p;
	double layer_states, tensor_states, tensor;

	fixture_gpt3_dp64(&c, &m, &p, 3);
	ck_assert_rel(model_largest_matrix_params(&m), 603979776.0, 1e-12);
	tensor = zero3_other(&m, &p, &c, tensor_yaml, &tensor_states);
	ck_assert_rel(zero3_other(&m, &p, &c, layer_yaml, &layer_states) - tensor, 2416558080.0, 1e-9);
	ck_assert_rel(tensor_states, layer_states, 1e-12);
	ck_assert_rel(zero3_other(&m, &p, &c, "name: t\ngather_unit: tensor\nzero3_grad_copies: 3\n", NULL) - tensor,
		      1207959552.0, 1e-9);
	p.zero = 1;
	ck_assert_double_eq(zero3_other(&m, &p, &c, tensor_yaml, NULL), zero3_other(&m, &p, &c, layer_yaml, NULL));
	cluster_release(&c);
}
END_TEST

/*
 * A gated MLP's largest matrix, as the tensor-by-tensor gather (the only
 * reader: deepspeed-2021, deepspeed-0.5) sees it: the gate and the up
 * projection are separate tensors there (Megatron-LM v2.5's ParallelMLP,
 * the code of that DeepSpeed era, has no gated MLP; the fused 2 x ffn fc1
 * came with --swiglu in 23.04). Llama 3 8B: QKV 4096 x (32 x 128 +
 * 2 x 8 x 128) = 4096 x 6144 = 25,165,824; the output projection 4096 x
 * 4096 = 16,777,216; an MLP matrix 4096 x 14336 = 58,720,256, the largest
 * (a fused fc1 would be 117,440,512).
 */
START_TEST(test_largest_matrix_gated)
{
	struct model m;

	test_load_model(&m, "name: g\nlayers: 2\nhidden: 4096\nheads: 32\nkv_heads: 8\nffn_hidden: 14336\n"
			    "gated_mlp: true\nvocab: 128256\nseq_len: 8192\n");
	ck_assert_rel(model_largest_matrix_params(&m), 58720256.0, 1e-12);
}
END_TEST

/*
 * FSDP2, FSDP1 and torchao (framework master_weights_only,
 * fp8_weight_recast): GPT-3's 7.5e9 parameters of a stage over dp 64 at
 * ZeRO-3 keep 2 x 7.5e9 / 64 = 234,375,000 bytes of 16-bit weights and,
 * reduced in bf16 (reduce_bytes 2), as many of gradients; with the fp32
 * master as the only copy, no weights (the 12 optimizer bytes hold the
 * master) and fp32 gradients, 4 x 7.5e9 / 64 = 468,750,000: the same
 * 468,750,000 for the two together. Below ZeRO-3 the gathered
 * 16-bit weights and the bf16 gradients stay: 2 x 7.5e9 = 1.5e10 each
 * (ZeRO-1 shards neither). Under fp8 the
 * linear weights keep the recipe's copies beside the 16-bit weight
 * (more than bf16); recast at each use they keep nothing more: the bf16
 * figure, and 0 with master_weights_only.
 */
START_TEST(test_fsdp2_weight_copies)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct memory_use bf, u;
	struct framework fw;
	const double psi = 7.5e9;

	fixture_gpt3_dp64(&c, &m, &p, 3);
	test_load_framework(&fw, "name: f\n");
	ck_assert(!fw.master_weights_only && !fw.fp8_weight_recast);
	memory_stage(&m, &p, &c, &fw, 0, psi, 0.0, &bf);
	ck_assert_rel(bf.weights, 234375000.0, 1e-12);
	test_load_framework(&fw, "name: f\nmaster_weights_only: true\nfp8_weight_recast: true\n");
	ck_assert(fw.master_weights_only && fw.fp8_weight_recast);
	memory_stage(&m, &p, &c, &fw, 0, psi, 0.0, &u);
	ck_assert_double_eq(u.weights, 0.0);
	ck_assert_rel(bf.gradients, 234375000.0, 1e-12);
	ck_assert_rel(u.gradients, 468750000.0, 1e-12);
	ck_assert_rel(u.optimizer, bf.optimizer, 1e-12);
	p.precision = PLAN_PRECISION_FP8;
	memory_stage(&m, &p, &c, &fw, 0, psi, 0.0, &u);
	ck_assert_double_eq(u.weights, 0.0);
	fw.master_weights_only = false;
	memory_stage(&m, &p, &c, &fw, 0, psi, 0.0, &u);
	ck_assert_rel(u.weights, 234375000.0, 1e-12);
	fw.fp8_weight_recast = false;
	memory_stage(&m, &p, &c, &fw, 0, psi, 0.0, &u);
	ck_assert(u.weights > 234375000.0 * 1.5);
	p.precision = PLAN_PRECISION_BF16;
	p.zero = 1;
	fw.master_weights_only = true;
	memory_stage(&m, &p, &c, &fw, 0, psi, 0.0, &u);
	ck_assert_rel(u.weights, 1.5e10, 1e-12);
	ck_assert_rel(u.gradients, 1.5e10, 1e-12);
	cluster_release(&c);
}
END_TEST

START_TEST(test_estimate_invariants)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct estimate e, e2;
	struct plan_error err;
	const struct estimate_breakdown *b = &e.breakdown;

	test_load_cluster(&c, TEST_CLUSTER_YAML
		"");
	test_load_model(&m, GPT3_YAML);
	gpt3_plan(&p);
	p.dp = 2; /* 192 GPUs of the 512 */
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e, &err), "%s", err.message);
	/* The bubble is the other 11 stages' slots once each: the last
	 * stage (the bottleneck) alone runs the logits, 2 b s h V / t of
	 * 2 b s (12 h^2 + ...) x 8 layers per stage, about 4 % of its slot; the
	 * first runs the embedding lookup, a memory pass. So it is a little
	 * under 11 slots, and above 10.5. */
	ck_assert(b->pp_bubble < 11.0 * e.details.slot_s);
	ck_assert(b->pp_bubble > 10.5 * e.details.slot_s);
	ck_assert(e.fits);
	ck_assert_int_eq(e.gpus, 192);
	ck_assert_rel(e.mfu, e.tflops_per_gpu * 1e12 / 312e12, 1e-12);
	ck_assert_rel(e.tokens_per_s, 1536.0 * 2048 / e.iteration_time_s, 1e-12);
	/* Weak sanity: doubling DP roughly halves the time. */
	p.dp = 4;
	ck_assert(estimate_plan(&m, &c, &p, NULL, &e2, &err));
	ck_assert(e2.iteration_time_s < 0.55 * e.iteration_time_s);
	/* Interleaving shrinks the bubble and adds stage traffic. */
	p.vpp = 2;
	ck_assert(estimate_plan(&m, &c, &p, NULL, &e, &err));
	ck_assert(e.breakdown.pp_bubble < e2.breakdown.pp_bubble);
	ck_assert(e.breakdown.pp_comm > e2.breakdown.pp_comm);
	/* GPT-3 without model parallelism does not fit in 80 GiB. */
	gpt3_plan(&p);
	p.tp = p.pp = 1;
	p.dp = 512;
	p.global_batch = 512;
	ck_assert(estimate_plan(&m, &c, &p, NULL, &e, &err));
	ck_assert(!e.fits);
	/* ZeRO-3 over 512 GPUs makes the model states fit... */
	p.zero = 3;
	ck_assert(estimate_plan(&m, &c, &p, NULL, &e2, &err));
	ck_assert(e2.memory.weights + e2.memory.gradients + e2.memory.optimizer <
		  0.01 * (e.memory.weights + e.memory.gradients + e.memory.optimizer));
	ck_assert(e2.breakdown.dp_comm > e.breakdown.dp_comm);
	cluster_release(&c);
}
END_TEST

/* The term of @b named @name, or NULL. */
static double *
breakdown_term(struct estimate_breakdown *b, const char *name)
{
	for (int i = 0; i < ESTIMATE_BREAKDOWN_COUNT; i++)
		if (strcmp(estimate_breakdown_name(i), name) == 0)
			return estimate_breakdown_at(b, i);
	return NULL;
}

/*
 * The list of the breakdown's terms (ESTIMATE_BREAKDOWN_TERMS) reaches
 * every term: the finite check names each one set to NaN or an infinity
 * (the core's check once left cp_comm out), and the sum counts each once.
 * Each term is set in turn on a copy of a real estimate, so a term the
 * API walks past fails here by name.
 */
START_TEST(test_breakdown_terms)
{
	const double bad_values[] = { NAN, INFINITY, -INFINITY };
	struct cluster c;
	struct model m;
	struct plan p;
	struct estimate e;
	struct estimate_breakdown b;
	struct plan_error err;
	double want = 0.0;

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	test_load_model(&m, GPT3_YAML);
	gpt3_plan(&p);
	p.dp = 2;
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e, &err), "%s", err.message);
	ck_assert(estimate_breakdown_finite(&e.breakdown, NULL));
	ck_assert_double_eq(estimate_breakdown_sum(&e.breakdown), e.iteration_time_s);
	for (int i = 0; i < ESTIMATE_BREAKDOWN_COUNT; i++) {
		const char *name = estimate_breakdown_name(i);

		for (size_t k = 0; k < sizeof(bad_values) / sizeof(bad_values[0]); k++) {
			const char *bad = NULL;

			b = e.breakdown;
			*estimate_breakdown_at(&b, i) = bad_values[k];
			ck_assert_msg(!estimate_breakdown_finite(&b, &bad), "%s = %g passes the finite check", name,
				      bad_values[k]);
			ck_assert_str_eq(bad, name);
			ck_assert_msg(!isfinite(estimate_breakdown_sum(&b)), "the sum leaves out %s", name);
		}
		for (int j = 0; j < i; j++)
			ck_assert_str_ne(estimate_breakdown_name(j), name);
	}
	/* Term i = 2^i: the sum is exact, and 2^n - 1 only with each term once. */
	for (int i = 0; i < ESTIMATE_BREAKDOWN_COUNT; i++) {
		*estimate_breakdown_at(&b, i) = ldexp(1.0, i);
		want += ldexp(1.0, i);
		ck_assert_double_eq(estimate_breakdown_get(&b, i), ldexp(1.0, i));
	}
	ck_assert_double_eq(estimate_breakdown_sum(&b), want);
	/* A name is its member's. */
	ck_assert_ptr_eq(breakdown_term(&b, "compute"), &b.compute);
	ck_assert_ptr_eq(breakdown_term(&b, "pp_bubble"), &b.pp_bubble);
	ck_assert_ptr_eq(breakdown_term(&b, "overhead"), &b.overhead);
	ck_assert_ptr_eq(breakdown_term(&b, "cp_comm"), &b.cp_comm);
	cluster_release(&c);
}
END_TEST

START_TEST(test_invalid_plans)
{
	static const struct { int tp, pp, dp, gb; const char *msg; } cases[] = {
		{ 5, 1, 1, 8, "attention heads (96) are not divisible by tp (5)" },
		{ 8, 7, 1, 8, "layers (96) are not divisible by pp x vpp (7 x 1)" },
		{ 8, 1, 3, 8, "global batch (8) is not divisible by dp x micro-batch (3 x 1)" },
		{ 8, 8, 16, 128, "the plan needs 1024 GPUs" },
	};
	struct cluster c;
	struct model m;
	struct plan p;
	struct estimate e;
	struct plan_error err;

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	test_load_model(&m, GPT3_YAML);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		gpt3_plan(&p);
		p.tp = cases[i].tp;
		p.pp = cases[i].pp;
		p.dp = cases[i].dp;
		p.global_batch = cases[i].gb;
		plan_error_clear(&err);
		ck_assert(!estimate_plan(&m, &c, &p, NULL, &e, &err));
		ck_assert_int_eq(err.kind, PLAN_ERR_PLAN);
		ck_assert_msg(strstr(err.message, cases[i].msg), "got '%s'", err.message);
	}
	cluster_release(&c);
}
END_TEST

START_TEST(test_tail_stage)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct estimate e;
	struct plan_error err;

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	test_load_model(&m, GPT3_YAML);
	gpt3_plan(&p);
	p.dp = 4;
	p.global_batch = 96;
	/* An uneven pipeline: 11 stages of one layer and a last of 85. */
	p.custom_layers = true;
	for (int s = 0; s < 11; s++)
		p.stage_layers[s] = 1;
	p.stage_layers[11] = 85;
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e, &err), "%s", err.message);
	/* The last stage's gradients end the iteration: 85 x 1,812,099,072
	 * layer parameters + final LayerNorm 24,576 + the tied embedding copy
	 * 629,145,600 = 154,657,591,296, / t 8 = 19,332,198,912; 16-bit
	 * gradients all-reduced over d 4 send 2 (3/4) x 2 x that = 57,996,596,736 B. */
	ck_assert_int_eq(e.details.tail_stage, 11);
	ck_assert_rel(e.details.dp_bytes_per_iteration, 57996596736.0, 1e-12);
	cluster_release(&c);
}
END_TEST

START_TEST(test_tp_bytes)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct estimate e;
	struct plan_error err;

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	test_load_model(&m, GPT3_YAML);
	plan_init(&p);
	p.tp = 8;
	p.pp = p.dp = 1;
	p.global_batch = 1;
	p.seq_len = 2048;
	/* Each of the 96 layers all-reduces b s h 16-bit values twice forward
	 * and twice backward; the embedding once forward, the output layer
	 * once backward: 386 all-reduces of 50,331,648 bytes, each sending
	 * 2 (7/8) of them: 386 x 88,080,384 = 33,999,028,224 bytes. */
	ck_assert(estimate_plan(&m, &c, &p, NULL, &e, &err));
	ck_assert_rel(e.bytes.tp, 33999028224.0, 1e-12);
	cluster_release(&c);
}
END_TEST

/* The toy GPT on one toy GPU: tp = pp = dp = 1, b 1, B 2 (m = 2). */
static void
toy_plan(struct plan *p, int tp, int pp, int dp)
{
	plan_init(p);
	p->tp = tp;
	p->pp = pp;
	p->dp = dp;
	p->global_batch = 2 * dp;
	p->seq_len = 1024;
}

/* Load the toy cluster and GPT and estimate toy_plan(1, 1, @dp). */
static void
toy_estimate(struct cluster *c, struct model *m, struct plan *p, int dp, struct estimate *e)
{
	struct plan_error err;

	test_load_cluster(c, TOY_CLUSTER_YAML);
	test_load_model(m, TOY_MODEL_YAML);
	toy_plan(p, 1, 1, dp);
	ck_assert_msg(estimate_plan(m, c, p, NULL, e, &err), "%s", err.message);
}

START_TEST(test_iteration_one_gpu)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct estimate e;
	const struct estimate_breakdown *b = &e.breakdown;

	toy_estimate(&c, &m, &p, 1, &e);
	/*
	 * One layer, one micro-batch (T = b s = 1024 tokens). Forward GEMM
	 * FLOPs 24 T h^2 + 4 T s h = 28 x 2^30 = 30,064,771,072 (SC21 Sec.
	 * 5.1); every GEMM is compute-bound on the toy GPU (QK^T, the least
	 * intense, has 102 FLOPs/byte > 5e13 / 1e12), so 6.0129542144e-4 s.
	 * Element-wise bytes (Korthikanti et al. 2022 Sec. 4.1 inventory):
	 * norms 8 T h + bias-dropout-add 14 T h + GeLU 4 T 4h + softmax and
	 * dropout 9 a s^2 = 8,388,608 + 14,680,064 + 16,777,216 + 75,497,472
	 * = 115,343,360 B at 1e12 B/s = 1.1534336e-4 s. Forward 7.1663878144e-4 s,
	 * backward twice that: 2.14991634432e-3 s per layer, 4.29983268864e-3
	 * for both.
	 */
	ck_assert_double_eq_tol(e.details.layer_fwd_s, 7.1663878144e-4, 1e-15);
	ck_assert_double_eq_tol(e.details.layer_bwd_s, 1.43327756288e-3, 1e-15);
	/*
	 * The one stage also holds the embedding and the logits. Embedding:
	 * 4 T h bytes forward (4.194304e-6 s), twice backward (8.388608e-6)
	 * and the zero fill of its V x h gradient (embedding_dense_backward's
	 * at::zeros, 2 V h = 67,108,864 B: 6.7108864e-5): 7.9691776e-5 s.
	 * Logits: a T x h x V GEMM, 2 T h V = 68,719,476,736 FLOPs = 1.37438953472e-3 s,
	 * plus 12 T V bytes of fp32 cross-entropy forward (4.02653184e-4) and
	 * 8 T V backward (2.68435456e-4) with two GEMMs: 1.77704271872e-3 +
	 * 3.01721452544e-3 s. One micro-batch: 4.29983268864e-3 +
	 * 7.9691776e-5 + 4.79425724416e-3 = 9.1737817088e-3 s; two:
	 * 1.83475634176e-2 s.
	 */
	ck_assert_double_eq_tol(b->compute, 1.83475634176e-2, 1e-14);
	/*
	 * The split of compute. Attention cores (Q K^T and P V, 4 T s h =
	 * 4,294,967,296 FLOPs forward: 8.589934592e-5 s; twice backward): 3 x
	 * 8.589934592e-5 per layer and micro-batch, x 4 = 1.03079215104e-3 s.
	 * Element-wise: 3 x 1.1534336e-4 per layer and micro-batch (x 4 =
	 * 1.38412032e-3), the embedding 2 x 7.9691776e-5 and the loss 2 x
	 * (4.02653184e-4 + 2.68435456e-4): 2.885681152e-3 s. The GEMMs: the
	 * rest, 1.443109011456e-2 s.
	 */
	ck_assert_double_eq_tol(e.details.compute_attention_s, 1.03079215104e-3, 1e-15);
	ck_assert_double_eq_tol(e.details.compute_other_s, 2.885681152e-3, 1e-15);
	ck_assert_double_eq_tol(e.details.compute_gemm_s, 1.443109011456e-2, 1e-14);
	/*
	 * Adam over all 2 x 12,596,224 + V h 33,554,432 + s h 1,048,576 +
	 * final LayerNorm 2,048 = 59,797,504 parameters, 28 bytes each
	 * (ZeRO Sec. 3.1 states: read 2 + 12, write 12 + 2), 4 more for the
	 * gradient norm of clipping and 4 to zero the gradient buffer: 36 x
	 * 59,797,504 B at 1e12 B/s = 2.152710144e-3 s. No communication, no
	 * bubble: 2.05002735616e-2 s.
	 */
	ck_assert_double_eq_tol(b->optimizer, 2.152710144e-3, 1e-15);
	ck_assert_double_eq(b->tp_comm + b->pp_comm + b->pp_bubble + b->dp_comm + b->recompute, 0.0);
	ck_assert_double_eq_tol(e.iteration_time_s, 2.05002735616e-2, 1e-14);
	cluster_release(&c);
}
END_TEST

/*
 * Issue 25: what the GEMMs' partial last waves add to an iteration, a
 * line of its own (wave_loss_estimate). The toy GPT at tp 2 on the toy
 * GPU given the H100's 132 SMs and the default 128 x 256 tiles (gpu.c),
 * T = 1024 tokens, h 1024, 8 heads of 128, GEMMs at a flat 5e13 FLOP/s.
 * Per layer's forward (cluster_gemm_wave_factor: the best fill of the
 * 128 x 256 tile, its transpose and the 128 x 128 half over that of the
 * square GEMM of the same FLOPs):
 * - QKV, 1024 x 1536 x 1024 (3h / t columns): 8 x 6 = 48 tiles of
 *   128 x 256, 4 x 12 = 48 of 256 x 128, 8 x 12 = 96 half tiles, all in
 *   one partial wave of 132: fill 96. Square side cbrt(1024 1536 1024)
 *   = 1172.2: 10 x 10 = 100 half tiles, fill 100. Factor 0.96:
 *   2 x 1024 x 1536 x 1024 / 5e13 = 6.442450944e-5 s becomes
 *   6.7108864e-5, a loss of 2.68435456e-6 s.
 * - the output projection, 1024 x 1024 x 512: 64 half tiles against the
 *   square's (side 812.7) 7 x 7 = 49: better than square, factor 1.
 * - fc1, 1024 x 2048 x 1024: 128 half tiles against the square's (side
 *   1290.2) 11 x 11 = 121: factor 1.
 * - fc2, 1024 x 1024 x 2048 (the row-parallel GEMM, K = 4h / t): 64
 *   half tiles in one wave, the square of the same FLOPs (side 1290.2)
 *   121: factor 64/121. 8.589934592e-5 s becomes 121/64 of it, a loss
 *   of 57/64 x 8.589934592e-5 = 7.650410496e-5 s.
 * - the attention cores, 4 local heads: Q K^T (1024 x 1024 x 128, x 4)
 *   256 half tiles in 2 waves, fill 128 against the square's (side
 *   812.7) 49: factor 1; P V (1024 x 128 x 1024, x 4) 8 x 1 x 4 = 32
 *   tiles of 128 x 256 (32 half, 16 of 256 x 128), fill 32 against 49:
 *   2 x 1024 x 128 x 1024 x 4 / 5e13 = 2.147483648e-5 s, a loss of
 *   17/32 of it, 1.140850688e-5 s.
 * - the logits, 1024 x 16384 x 1024: 512 tiles in 4 waves, fill 128
 *   against the square's (side 2580.3) 231 tiles in 2 waves, 115.5:
 *   factor 1.
 * A layer's forward loses 2.68435456e-6 + 7.650410496e-5 +
 * 1.140850688e-5 = 9.05969664e-5 s, its backward twice that (a dX and a
 * dW GEMM of each shape); 2 layers, 2 micro-batches: 4 x 3 x
 * 9.05969664e-5 = 1.0871635968e-3 s. Nothing hides it (no overlap, no
 * host model, one stage, dp 1): the iteration grows by exactly that.
 */
START_TEST(test_gemm_wave_loss)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct estimate e, flat;
	struct plan_error err;

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	test_load_model(&m, TOY_MODEL_YAML);
	toy_plan(&p, 2, 1, 1);
	c.gpu.sm_count = 132;
	ck_assert_int_eq(c.gpu.gemm_tile_m, 128);
	ck_assert_int_eq(c.gpu.gemm_tile_n, 256);
	plan_error_clear(&err);
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e, &err), "%s", err.message);
	/* estimate_plan leaves it unwritten: the search does not pay for it. */
	ck_assert(!e.details.gemm_wave_loss_known);
	ck_assert_msg(wave_loss_estimate(&m, &c, &p, NULL, &e, &err), "%s", err.message);
	ck_assert(e.details.gemm_wave_loss_known);
	ck_assert_double_eq_tol(e.details.gemm_wave_loss_s, 1.0871635968e-3, 1e-15);
	/* Of it, the linear GEMMs' 4 x 3 x (2.68435456e-6 + 7.650410496e-5)
	 * = 9.5026151424e-4 s move the GEMM split, P V's 4 x 3 x
	 * 1.140850688e-5 = 1.3690208256e-4 s the attention cores'. */
	c.gpu.sm_count = 0;
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &flat, &err), "%s", err.message);
	ck_assert_double_eq_tol(e.details.compute_gemm_s - flat.details.compute_gemm_s, 9.5026151424e-4, 1e-15);
	ck_assert_double_eq_tol(e.details.compute_attention_s - flat.details.compute_attention_s, 1.3690208256e-4,
				1e-15);
	ck_assert_double_eq_tol(e.iteration_time_s - flat.iteration_time_s, 1.0871635968e-3, 1e-15);
	/* Without an SM count there are no waves: 0, and written. */
	ck_assert_msg(wave_loss_estimate(&m, &c, &p, NULL, &flat, &err), "%s", err.message);
	ck_assert(flat.details.gemm_wave_loss_known);
	ck_assert_double_eq(flat.details.gemm_wave_loss_s, 0.0);
	cluster_release(&c);
}
END_TEST

/*
 * A hand-made profile no schema would load: the toy GPU at 1 kFLOP/s
 * (the schema's floor is 1 GFLOP/s). Its GEMMs alone take 1.443e-2 s x
 * 5e13 / 1e3 = 7.2e8 s, more than a year (ESTIMATE_MAX_ITERATION_S):
 * estimate_plan refuses it, naming compute, the term that dominates.
 */
START_TEST(test_implausible_iteration)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct estimate e;
	struct plan_error err;

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	test_load_model(&m, TOY_MODEL_YAML);
	toy_plan(&p, 1, 1, 1);
	c.gpu.peak_flops = 1e3;
	plan_error_clear(&err);
	ck_assert(!estimate_plan(&m, &c, &p, NULL, &e, &err));
	ck_assert_int_eq(err.kind, PLAN_ERR_PLAN);
	ck_assert_msg(strstr(err.message, "is more than a year, mostly breakdown.compute"), "got '%s'",
		      err.message);
	/* At its own speed the toy is a number again. */
	c.gpu.peak_flops = 5e13;
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e, &err), "%s", err.message);
	ck_assert(e.iteration_time_s < ESTIMATE_MAX_ITERATION_S);
	cluster_release(&c);
}
END_TEST

/*
 * A framework's fixed costs (a framework profile's layer_overhead,
 * microbatch_overhead, iteration_overhead) on the one-GPU toy: 2 layers
 * x 1 ms + 2 ms per micro-batch, 2 micro-batches, and 3 ms once: 11 ms
 * in the overhead row, added to test_iteration_one_gpu's 2.05002735616e-2 s.
 * With pp 2 the bubble also runs the other stage's micro-batch once, with
 * its costs: stage 0 (1 layer) waits 1 + 2 = 3 ms more.
 */
START_TEST(test_framework_overheads)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct estimate e, e0;
	struct plan_error err;
	struct framework fw;
	struct estimate_options opt = { COLL_ALGO_RING, NULL, &fw };

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	test_load_model(&m, TOY_MODEL_YAML);
	toy_plan(&p, 1, 1, 1);
	framework_init_default(&fw);
	fw.layer_overhead_s = 1e-3;
	fw.microbatch_overhead_s = 2e-3;
	fw.iteration_overhead_s = 3e-3;
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &e, &err), "%s", err.message);
	ck_assert_double_eq_tol(e.breakdown.overhead, 11e-3, 1e-15);
	ck_assert_double_eq_tol(e.iteration_time_s, 2.05002735616e-2 + 11e-3, 1e-14);
	toy_plan(&p, 1, 2, 1);
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e0, &err), "%s", err.message);
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &e, &err), "%s", err.message);
	ck_assert_double_eq_tol(e.breakdown.pp_bubble - e0.breakdown.pp_bubble, 3e-3, 1e-15);
	/*
	 * plan-cli itercost: training metrics over the logits (Composer's two
	 * cross-entropies, metric_logit_bytes 28) after each micro-batch: T V
	 * = 1024 x 32768 = 33,554,432 logits x 28 B = 939,524,096 B at
	 * 1e12 B/s = 9.39524096e-4 s a micro-batch, 2 micro-batches:
	 * 1.879048192e-3 s in overhead, on top of test_iteration_one_gpu.
	 */
	framework_init_default(&fw);
	fw.metric_logit_bytes = 28.0;
	toy_plan(&p, 1, 1, 1);
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &e, &err), "%s", err.message);
	ck_assert_double_eq_tol(e.breakdown.overhead, 1.879048192e-3, 1e-15);
	ck_assert_double_eq_tol(e.iteration_time_s, 2.05002735616e-2 + 1.879048192e-3, 1e-14);
	/* With pp 2 only the last stage holds the logits: stage 0's slot in
	 * the bubble has no metrics, and the last stage sets the pace. */
	toy_plan(&p, 1, 2, 1);
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &e, &err), "%s", err.message);
	ck_assert_int_eq(e.details.bottleneck_stage, 1);
	ck_assert_double_eq_tol(e.breakdown.overhead, 1.879048192e-3, 1e-15);
	ck_assert_double_eq_tol(e.breakdown.pp_bubble, e0.breakdown.pp_bubble, 1e-15);
	/* A framework that reduces the gradients after the backward (Megatron
	 * without --overlap-grad-reduce) hides none of test_dp_overlap_window's
	 * 2.09899264e-2 s all-reduce. */
	framework_init_default(&fw);
	fw.grad_reduce_overlap = false;
	toy_plan(&p, 1, 1, 8);
	ck_assert_msg(estimate_plan(&m, &c, &p, &opt, &e, &err), "%s", err.message);
	ck_assert_double_eq(e.details.dp_overlap_window_s, 0.0);
	ck_assert_double_eq_tol(e.breakdown.dp_comm, 2.09899264e-2, 1e-14);
	cluster_release(&c);
}
END_TEST

/*
 * An overlapped TP collective (--tp-overlap; Wang et al. ASPLOS 2023), a
 * pipeline of t chunks, the GEMM slowed by the SMs the collective takes
 * and paying a GEMM launch's fixed cost per extra chunk. 1 ms of
 * all-gather in 4 chunks of 0.25 ms against a 0.8 ms GEMM in 4 of 0.2 ms
 * over the copy engines (no slowdown, no chunk cost): 0.25 + 3 x 0.25 +
 * 0.2 = 1.2 ms, 0.4 ms beyond the GEMM, the 0.2 ms excess and a GEMM
 * chunk. A reduce-scatter of 0.5 ms in 8 chunks after a 2 ms GEMM on a
 * Hopper, whose 16 userbuffers SMs leave 116 of 132 (x 132/116) and 5 us
 * a chunk: GEMM chunks of (2 x 132/116 + 7 x 0.005) / 8 = 0.288857759 ms,
 * longer than the 0.0625 ms collective chunks, so 0.0625 + 8 x
 * 0.288857759 - 2 = 0.373362069 ms beyond the GEMM.
 */
START_TEST(test_tp_overlap)
{
	struct cluster c;

	memset(&c, 0, sizeof(c));
	c.gpu.generation = GPU_GEN_HOPPER;
	ck_assert_double_eq_tol(tp_overlap_sm_slowdown(&c, true), 132.0 / 116.0, 1e-15);
	ck_assert_double_eq(tp_overlap_sm_slowdown(&c, false), 1.0);
	/* A B200's 148 SMs: 148 / 132 = 1.1212. */
	c.gpu.generation = GPU_GEN_BLACKWELL;
	ck_assert_double_eq_tol(tp_overlap_sm_slowdown(&c, true), 1.121212121, 1e-9);
	ck_assert_double_eq_tol(tp_overlapped_time(1e-3, 0.8e-3, 4, 1.0, 0.0), 0.4e-3, 1e-15);
	ck_assert_double_eq_tol(tp_overlapped_time(0.5e-3, 2e-3, 8, 132.0 / 116.0, 5e-6), 0.373362069e-3, 1e-12);
	/* The collective twice the GEMM: 2 ms against 1 ms in 2 chunks, 1 +
	 * 0.5 + 1 - 1 = 1.5 ms beyond it, under the serial 2 ms. */
	ck_assert_double_eq_tol(tp_overlapped_time(2e-3, 1e-3, 2, 1.0, 0.0), 1.5e-3, 1e-15);
	ck_assert(tp_overlapped_time(2e-3, 1e-3, 2, 1.0, 0.0) < 2e-3);
	/* Not split (t = 1): nothing overlaps, the collective is all seen. */
	ck_assert_double_eq_tol(tp_overlapped_time(1e-3, 0.8e-3, 1, 1.0, 0.0), 1e-3, 1e-15);
}
END_TEST

/* The toy GPT on @cluster_yaml split over @cp context-parallel ranks of
 * one node (toy_plan(1, 1, 1), flash attention), its layout, and the plan
 * one rank runs (plan_cp_local: s / cp tokens); the layer's attention
 * takes @attn_fwd_s forward and @attn_bwd_s backward. */
static void
ring_setup(struct cluster *c, struct model *m, struct plan *p, struct plan_layout *lay, struct compute_layer *cl,
	   const char *cluster_yaml, int cp, double attn_fwd_s, double attn_bwd_s)
{
	test_load_cluster(c, cluster_yaml);
	test_load_model(m, TOY_MODEL_YAML);
	toy_plan(p, 1, 1, 1);
	p->cp = cp;
	p->flash_attention = true;
	topology_plan(p, c, lay);
	*p = plan_cp_local(p);
	*cl = (struct compute_layer){ 0 };
	cl->attn_fwd_s = attn_fwd_s;
	cl->attn_bwd_s = attn_bwd_s;
}

/*
 * One ring-attention step (Liu et al. 2023; Megatron-Core's context
 * parallelism): the toy GPT (h 1024, 8 heads of 128, no GQA), s 1024
 * split over cp 2 ranks of one node: each holds 512 tokens and passes
 * its K and V, 2 x 2 B x 512 x 8 x 128 = 2,097,152 B, over NVLink: 1 us
 * + 2,097,152 / 1e11 = 2.197152e-5 s. Against a forward attention of
 * 1e-5 s (5e-6 per block) the cp - 1 = 1 step shows 1.697152e-5 s; the
 * backward sends K, V and their gradients (twice the bytes) against
 * 2e-5 s per block: 2.394304e-5 s. It sends 3 x 2,097,152 B in all.
 * Transformer Engine's passes around the kernels (context_par.c
 * ring_p2p_passes; no launch or fill cost on the toy GPU), at 1 TB/s,
 * with O = Q = 2 B x 512 x 1024 = 1,048,576 B and K, V = 2,097,152 B:
 * forward, rank 1 7 O + 3 KV = 13,631,488 B against rank 0's 5.5 O +
 * Q + 2 KV = 11,010,048: 1.3631488e-5 s, 3.0603008e-5 s in all;
 * backward, rank 1 5 Q + 10 KV = 26,214,400 B against rank 0's 6.5 Q +
 * 10.5 KV = 28,835,840: 2.883584e-5 s, 5.277888e-5 s in all.
 */
START_TEST(test_ring_attention_step)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;
	struct compute_layer cl;
	struct cp_layer_comm cc;

	ring_setup(&c, &m, &p, &lay, &cl, TOY_CLUSTER_YAML, 2, 1e-5, 4e-5);
	ck_assert_int_eq(p.seq_len, 512);
	cp_layer_comm(&m, &p, &c, NULL, &lay, &cl, &cc);
	ck_assert_double_eq_tol(cc.step_s, 2.197152e-5, 1e-15);
	ck_assert_double_eq_tol(cc.fwd_s, 3.0603008e-5, 1e-15);
	ck_assert_double_eq_tol(cc.bwd_s, 5.277888e-5, 1e-15);
	ck_assert_double_eq_tol(cc.bytes, 3.0 * 2097152, 1e-6);
	cluster_release(&c);
}
END_TEST

/*
 * plan-cli nemosmall: Transformer Engine's p2p ring over cp 4 ranks
 * (context_par.c ring_p2p_passes), the transfers hidden behind long
 * blocks (1 ms forward, 4 ms backward), 1 us a kernel launch. Each rank
 * holds 256 tokens: O = Q = 2 B x 256 x 1024 = 524,288 B, K and V
 * 2 x 256 x 8 x 256 = 1,048,576 B. Forward: rank 3 O (1 + 3 x 4) + KV
 * (4 + 1) = 6,815,744 + 5,242,880 = 12,058,624 B against rank 0's O
 * (2.5 + 1.5 x 4) + 3 Q + 2 KV = 8,126,464: 1.2058624e-5 s at 1 TB/s
 * and 3 x 4 = 12 kernels, 2.4058624e-5 s. Backward: rank 3 Q (3 x 4 -
 * 1) + KV (3.5 x 4 + 3) = 23,592,960 B and 16 kernels, 3.959296e-5 s;
 * rank 0 Q (4.5 x 4 - 2.5) + KV (5 x 4 + 0.5) = 8,126,464 + 21,495,808 =
 * 29,622,272 B and 24 kernels, 5.3622272e-5 s, the slower; 3 more
 * attention calls at the toy's 0 s fill: 5.3622272e-5 s.
 */
START_TEST(test_ring_attention_p2p_passes)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;
	struct compute_layer cl;
	struct cp_layer_comm cc;

	ring_setup(&c, &m, &p, &lay, &cl, TOY_CLUSTER_YAML_LAUNCH("1 us"), 4, 1e-3, 4e-3);
	ck_assert_int_eq(p.seq_len, 256);
	cp_layer_comm(&m, &p, &c, NULL, &lay, &cl, &cc);
	ck_assert_double_eq_tol(cc.fwd_s, 2.4058624e-5, 1e-15);
	ck_assert_double_eq_tol(cc.bwd_s, 5.3622272e-5, 1e-15);
	ck_assert_double_eq(cc.recompute_s, 0.0);
	/* Selective recomputation reruns the whole CP attention forward
	 * where the framework checkpoints the core attention (Megatron-Core)
	 * or the core_attn module is asked for; not with the default. */
	p.recompute = PLAN_RECOMPUTE_SELECTIVE;
	cp_layer_comm(&m, &p, &c, NULL, &lay, &cl, &cc);
	ck_assert_double_eq(cc.recompute_s, 0.0);
	{
		struct framework fw;

		framework_init_default(&fw);
		fw.selective_recompute = FRAMEWORK_SAC_CORE_ATTN;
		cp_layer_comm(&m, &p, &c, &fw, &lay, &cl, &cc);
		ck_assert_double_eq_tol(cc.recompute_s, 2.4058624e-5, 1e-15);
	}
	p.recompute_modules = 1 << PLAN_RM_CORE_ATTN;
	cp_layer_comm(&m, &p, &c, NULL, &lay, &cl, &cc);
	ck_assert_double_eq_tol(cc.recompute_s, 2.4058624e-5, 1e-15);
	p.recompute_modules = 1 << PLAN_RM_MLP;
	cp_layer_comm(&m, &p, &c, NULL, &lay, &cl, &cc);
	ck_assert_double_eq(cc.recompute_s, 0.0);
	cluster_release(&c);
}
END_TEST

/*
 * The same step as PyTorch's context_parallel runs it (framework cp_ring
 * allgather, context_par.c): one all-gather of both ranks' K and V,
 * 2 x 2,097,152 B gathered over 2 ranks on NVLink (a ring: 1 step, 1 us
 * + 2,097,152 / 1e11 = 2.197152e-5 s), exposed; the second block's
 * output merged in fp32, 12 B x 512 tokens x 1024 = 6,291,456 B at
 * 1 TB/s = 6.291456e-6 s: forward 2.8262976e-5 s. Backward: the gather
 * again, the gradients' step beyond the 2e-5 s block, 2.197152e-5 - 2e-5
 * = 1.97152e-6 s, and dQ added in fp32, 8 x 512 x 1024 = 4,194,304 B,
 * 4.194304e-6 s: 2.8137344e-5 s.
 */
START_TEST(test_ring_attention_allgather)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;
	struct compute_layer cl;
	struct cp_layer_comm cc;
	struct framework fw;

	ring_setup(&c, &m, &p, &lay, &cl, TOY_CLUSTER_YAML, 2, 1e-5, 4e-5);
	framework_init_default(&fw);
	fw.cp_ring = FRAMEWORK_RING_ALLGATHER;
	cp_layer_comm(&m, &p, &c, &fw, &lay, &cl, &cc);
	ck_assert_double_eq_tol(cc.fwd_s, 2.8262976e-5, 1e-15);
	ck_assert_double_eq_tol(cc.bwd_s, 2.8137344e-5, 1e-15);
	cluster_release(&c);
}
END_TEST

/*
 * plan-cli cpag: Megatron-Core's cp_comm_type all_gather (Transformer
 * Engine's AttnFuncWithCPAndKVAllGather, context_par.c cp_allgather) on
 * the toy GPT (8 heads of 128, no GQA), s 1024 over cp 2 on one node:
 * the rank's K and V are each 2 B x 512 x 8 x 128 = 1,048,576 B. An
 * all-gather of the 2 x 1,048,576 B total over a 2-rank ring: 1 us +
 * 1,048,576 / 1e11 = 1.148576e-5 s; K and V: forward 2.297152e-5 s,
 * exposed whatever the blocks take. Backward: gathered again and dK, dV
 * reduce-scattered (the same toy time each): 4.594304e-5 s. Bytes sent:
 * (cp - 1) x 3 x (K + V) = 6,291,456. Transient memory through the
 * backward: K, V gathered and dK, dV full, 2 x 2 x 2 x 512 x 8 x 256 =
 * 8,388,608 B; none with the ring.
 */
START_TEST(test_cp_allgather)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;
	struct compute_layer cl;
	struct cp_layer_comm cc;

	ring_setup(&c, &m, &p, &lay, &cl, TOY_CLUSTER_YAML, 2, 1e-5, 4e-5);
	p.cp_method = PLAN_CP_ALLGATHER;
	cp_layer_comm(&m, &p, &c, NULL, &lay, &cl, &cc);
	ck_assert_double_eq_tol(cc.step_s, 2.297152e-5, 1e-15);
	ck_assert_double_eq_tol(cc.fwd_s, 2.297152e-5, 1e-15);
	ck_assert_double_eq_tol(cc.bwd_s, 4.594304e-5, 1e-15);
	ck_assert_double_eq_tol(cc.bytes, 6291456.0, 1e-6);
	ck_assert_double_eq_tol(memory_cp_allgather_transient(&m, &p), 8388608.0, 1e-6);
	p.cp_method = PLAN_CP_RING;
	ck_assert_double_eq(memory_cp_allgather_transient(&m, &p), 0.0);
	cluster_release(&c);
}
END_TEST

/*
 * fp8 memory (memory.c, fp8_recipe.c) on GPT-3's middle stage (pp 4,
 * stage 1: no embedding or output layer), Psi = 1e9 parameters, ZeRO 0,
 * no generation given (Hopper-like: a transposed copy):
 * - delayed: the 16-bit weight and TE's fp8 copy and its transpose,
 *   2 + 1 + 1 = 4 bytes: 4e9; its amax histories in other: 24 layers x
 *   4 linears x 5 tensors x 4 B x (1024 + 2) = 1,969,920 B;
 * - delayed with fp8 primary weights (framework fp8_params: NeMo's
 *   fp8_params): the fp8 weight and its transpose alone, 2e9;
 * - rowwise (torchao): no cached fp8 weight, 2e9, and no history.
 * Activations (tp 8, no SP, s 2048, b 1, flash, no recompute): TE saves
 * the fp8 inputs of QKV and fc1 (2 x 12288 a token, replicated) and of
 * the projection and fc2 ((12288 + 49152) / 8 on a rank), 1 byte less
 * each: 2048 x (24576 + 7680) = 66,060,288 B fewer than in bf16;
 * torchao's rowwise saves the bf16 input: none fewer; and so does its
 * tensor-wise recipe (current under a framework with fp8_weight_recast:
 * Float8Linear saves input_hp whatever the recipe, torchao float8_linear.py
 * matmul_with_hp_or_float8_args), where Transformer Engine's current
 * scaling saves the 66,060,288 B as delayed does.
 */
START_TEST(test_fp8_memory)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct memory_use u, bf;
	const double psi = 1e9;
	double act16;
	struct framework fw;

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	test_load_model(&m, GPT3_YAML);
	gpt3_plan(&p);
	p.pp = 4;
	p.recompute = PLAN_RECOMPUTE_NONE;
	p.flash_attention = true;
	memory_stage(&m, &p, &c, NULL, 1, psi, 0.0, &bf);
	act16 = memory_layer_activations(&m, &p, NULL);
	p.precision = PLAN_PRECISION_FP8;
	memory_stage(&m, &p, &c, NULL, 1, psi, 0.0, &u);
	ck_assert_rel(u.weights, 4e9, 1e-12);
	ck_assert_rel(u.other - bf.other, 1969920.0, 1e-12);
	ck_assert_rel(act16 - memory_layer_activations(&m, &p, NULL), 66060288.0, 1e-12);
	framework_init_default(&fw);
	fw.fp8_params = true;
	memory_stage(&m, &p, &c, &fw, 1, psi, 0.0, &u);
	ck_assert_rel(u.weights, 2e9, 1e-12);
	p.fp8_recipe = PLAN_FP8_ROWWISE;
	memory_stage(&m, &p, &c, NULL, 1, psi, 0.0, &u);
	ck_assert_rel(u.weights, 2e9, 1e-12);
	ck_assert_double_eq(u.other, bf.other);
	ck_assert_double_eq(memory_layer_activations(&m, &p, NULL), act16);
	p.fp8_recipe = PLAN_FP8_CURRENT;
	fw.fp8_params = false;
	ck_assert_rel(act16 - memory_layer_activations(&m, &p, &fw), 66060288.0, 1e-12);
	fw.fp8_weight_recast = true;
	ck_assert_double_eq(memory_layer_activations(&m, &p, &fw), act16);
	/*
	 * Sequence parallelism (lnout): TE v2.18's LayerNormLinear and Linear
	 * quantise a gathered input row-wise only under per-tensor scaling
	 * (Float8Quantizer and Float8CurrentScalingQuantizer
	 * supports_only_rowwise_all_gather) and save that local shard, no
	 * transpose: still 1 byte an element, on Hopper as on Blackwell.
	 * s b = 2048, h 12288, f 49152, t = sp = 8: QKV's and fc1's inputs
	 * 2 x 12288 / 8 = 3072, fc2's 49152 / 8 = 6144, the projection's
	 * 12288 / 8 = 1536 elements a token, (2 - 1) byte each saved:
	 * 2048 x 10752 = 22,020,096 bytes (2 bytes: 0).
	 */
	p.sequence_parallel = true;
	p.precision = PLAN_PRECISION_BF16;
	act16 = memory_layer_activations(&m, &p, NULL);
	p.precision = PLAN_PRECISION_FP8;
	fw.fp8_weight_recast = false;
	ck_assert_rel(act16 - memory_layer_activations(&m, &p, &fw), 22020096.0, 1e-12);
	p.fp8_recipe = PLAN_FP8_DELAYED;
	ck_assert_rel(act16 - memory_layer_activations(&m, &p, &fw), 22020096.0, 1e-12);
	cluster_release(&c);
}
END_TEST

START_TEST(test_dp_overlap_window)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct estimate e;
	struct plan_error err;
	const struct estimate_breakdown *b = &e.breakdown;

	/* The one-GPU toy of test_iteration_one_gpu on dp 8 (both nodes), B 16: still m = 2. */
	toy_estimate(&c, &m, &p, 8, &e);
	/*
	 * Ring all-reduce of the 16-bit gradients, 2 x 59,797,504 =
	 * 119,595,008 B, over 8 ranks on 2 nodes (NCCL ring: 14 steps, 2 of
	 * them across nodes; nccl-tests busbw factor 2 (n-1)/n = 1.75): 12 x
	 * 1 us + 2 x 10 us = 32 us, times NCCL's plateau factor for a ring
	 * all-reduce across nodes (the schema's 1.9) = 60.8 us, plus 1.75 x
	 * 119,595,008 B through the 4 GPUs' NIC shares (4 x 2.5e9 B/s;
	 * NVLink's 1e11 is faster) = 2.09291264e-2 s: 2.09899264e-2 s.
	 */
	ck_assert_double_eq_tol(e.details.dp_total_s, 2.09899264e-2, 1e-14);
	ck_assert_double_eq_tol(e.details.dp_bytes_per_iteration, 1.75 * 119595008.0, 1e-3);
	/*
	 * The window: the backward of the last micro-batch, less its last
	 * bucket (one of 2 layers; PyTorch DDP / Megatron overlap-grad-reduce).
	 * Backward of the stage: 2 x 1.43327756288e-3 + embedding 7.5497472e-5
	 * (its rows and its gradient's zero fill) + logits 3.01721452544e-3 =
	 * 5.9592671232e-3 s; half: 2.9796335616e-3.
	 * Exposed: 2.09899264e-2 - 2.9796335616e-3 = 1.80102928384e-2 s.
	 */
	ck_assert_double_eq_tol(e.details.dp_overlap_window_s, 2.9796335616e-3, 1e-15);
	ck_assert_double_eq_tol(b->dp_comm, 1.80102928384e-2, 1e-14);
	/* 1.83475634176e-2 compute + 1.80102928384e-2 + the step 2.152710144e-3. */
	ck_assert_double_eq_tol(e.iteration_time_s, 3.85105664e-2, 1e-14);
	/*
	 * Full recomputation re-runs each layer's forward inside the backward,
	 * before the layer's own backward (SC21 Sec. 3.5; InternEvo's and
	 * Megatron's checkpointed layers), while the reduction runs on: the
	 * window grows by half the micro-batch's recompute, 2 layers x
	 * 7.1663878144e-4 s = 1.43327756288e-3 s (test_iteration_one_gpu):
	 * (5.9592671232e-3 + 1.43327756288e-3) / 2 = 3.69627234304e-3 s.
	 * Exposed: 2.09899264e-2 - 3.69627234304e-3 = 1.729365405696e-2 s.
	 */
	p.recompute = PLAN_RECOMPUTE_FULL;
	ck_assert(estimate_plan(&m, &c, &p, NULL, &e, &err));
	ck_assert_double_eq_tol(b->recompute, 2.0 * 1.43327756288e-3, 1e-15);
	ck_assert_double_eq_tol(e.details.dp_overlap_window_s, 3.69627234304e-3, 1e-15);
	ck_assert_double_eq_tol(b->dp_comm, 1.729365405696e-2, 1e-14);
	p.recompute = PLAN_RECOMPUTE_NONE;
	/* Without overlap the whole reduction is exposed. */
	p.dp_overlap = false;
	ck_assert(estimate_plan(&m, &c, &p, NULL, &e, &err));
	ck_assert_double_eq(e.details.dp_overlap_window_s, 0.0);
	ck_assert_double_eq_tol(b->dp_comm, 2.09899264e-2, 1e-14);
	cluster_release(&c);
}
END_TEST

START_TEST(test_pipeline_sends)
{
	static const struct {
		int tp, pp, dp, vpp, stage;
		bool sp;
		double time_s, bytes;
	} cases[] = {
		/*
		 * One micro-batch (b 1, s 1024, h 1024) crosses a stage boundary
		 * as its b s h 16-bit activation, B = 2,097,152 bytes, forward,
		 * and its gradient backward (SC21 Sec. 2.2 and 4.1); Megatron
		 * batches the two directions into one exchange. The toy cluster
		 * has 4 GPUs a node and one 100 Gbit/s NIC at 0.8 (10 GB/s).
		 */
		/* pp 2 on one node, stage 0: one boundary, 1 us + B / 1e11. */
		{ 1, 2, 1, 1, 0, false, 2.197152e-5, 2097152 },
		/* Interleaved, v 2: stage 0 also exchanges with the last stage
		 * (the wrap), each of its 2 chunks with stage 1, but only chunk
		 * 1 over the wrap: virtual stage 0 receives no input and sends
		 * no gradient back (Megatron-Core schedules.py, interleaved
		 * steady state): 3 x 2.197152e-5 = 6.591456e-5. */
		{ 1, 2, 1, 2, 0, false, 6.591456e-5, 3.0 * 2097152 },
		/* pp 4, v 2, one node: the last stage's 2 chunks both border
		 * stage 2, its last virtual stage sends nothing over the wrap:
		 * 3 exchanges, 6.591456e-5; a middle stage 2 + 2: 8.788608e-5. */
		{ 1, 4, 1, 2, 3, false, 6.591456e-5, 3.0 * 2097152 },
		{ 1, 4, 1, 2, 1, false, 8.788608e-5, 4.0 * 2097152 },
		/* dp 4 fills a node per stage: the boundary crosses, and the 4
		 * GPUs of the stage share the NIC: 10 us + B / 2.5e9. */
		{ 1, 2, 4, 1, 0, false, 8.488608e-4, 2097152 },
		/* pp 4 x dp 2: stages 0-1 on node 0, 2-3 on node 1. Stage 1
		 * exchanges with stage 0 inside the node (2.197152e-5) and with
		 * stage 2 across it, where only its 2 GPUs share the NIC (5
		 * GB/s): 10 us + B / 5e9 = 4.294304e-4. In all 4.5140192e-4 s;
		 * it sends 2 B (an activation and a gradient). */
		{ 1, 4, 2, 1, 1, false, 4.5140192e-4, 2.0 * 2097152 },
		/* ... and stage 0's only boundary stays inside the node. */
		{ 1, 4, 2, 1, 0, false, 2.197152e-5, 2097152 },
		/* tp 4 across nodes: Megatron's scatter/gather (SC21 Sec. 4.1)
		 * sends B/4 = 524,288 B per TP rank (10 us + 2.097152e-4 s) and
		 * rebuilds B with an NVLink all-gather over 4 (3 x 1 us + 3/4 B
		 * / 1e11 = 1.872864e-5 s): 2.3844384e-4 s. */
		{ 4, 2, 1, 1, 0, false, 2.3844384e-4, 524288 },
		/* Sequence parallelism already splits s: B/4 per rank, no
		 * all-gather: 2.197152e-4 s. */
		{ 4, 2, 1, 1, 0, true, 2.197152e-4, 524288 },
		/* No pipeline, no sends. */
		{ 4, 1, 1, 1, 0, false, 0.0, 0.0 },
	};
	struct cluster c;
	struct model m;
	struct plan p;
	struct plan_layout lay;

	test_load_cluster(&c, TOY_CLUSTER_YAML);
	test_load_model(&m, "name: toy4\nlayers: 4\nhidden: 1024\nheads: 8\nvocab: 32768\nseq_len: 1024\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double bytes = -1.0;

		toy_plan(&p, cases[i].tp, cases[i].pp, cases[i].dp);
		p.vpp = cases[i].vpp;
		p.sequence_parallel = cases[i].sp;
		topology_plan(&p, &c, &lay);
		ck_assert_double_eq_tol(pipeline_stage_p2p_time(&m, &p, &c, &lay, cases[i].stage, &bytes),
					cases[i].time_s, 1e-15);
		ck_assert_double_eq_tol(bytes, cases[i].bytes, 1e-6);
	}
	/* Which boundaries of pp 4 x dp 2 cross nodes: only the middle one. */
	toy_plan(&p, 1, 4, 2);
	ck_assert(!pipeline_boundary_crosses(&p, 4, 0));
	ck_assert(pipeline_boundary_crosses(&p, 4, 1));
	ck_assert(!pipeline_boundary_crosses(&p, 4, 2));
	cluster_release(&c);
}
END_TEST

/* A GPT-3 1.3B-like model: 24 layers, h 2048, a 16, s 2048. */
#define GPT3_1B3_YAML "name: gpt3-1.3b\nlayers: 24\nhidden: 2048\nheads: 16\nvocab: 51200\nseq_len: 2048\n"

static void
slapo_plan(struct plan *p, int recompute, int n)
{
	plan_init(p);
	p->tp = p->dp = p->micro_batch = 1;
	p->pp = 2;
	p->global_batch = 8;
	p->seq_len = 2048;
	p->recompute = recompute;
	if (n >= 0) {
		p->custom_recompute_layers = true;
		p->stage_recompute_layers_count = 2;
		p->stage_recompute_layers[0] = p->stage_recompute_layers[1] = (short)n;
	}
}

static void
slapo_estimate(const struct model *m, const struct cluster *c, int recompute, int n, struct estimate *e)
{
	struct plan p;
	struct plan_error err;

	slapo_plan(&p, recompute, n);
	ck_assert_msg(estimate_plan(m, c, &p, NULL, e, &err), "%s", err.message);
}

/* Every figure of two estimates, exactly (memcmp would also compare padding). */
static void
assert_same_estimate(const struct estimate *a, const struct estimate *b)
{
	ck_assert_double_eq(a->iteration_time_s, b->iteration_time_s);
	ck_assert_double_eq(a->breakdown.recompute, b->breakdown.recompute);
	ck_assert_double_eq(a->breakdown.pp_bubble, b->breakdown.pp_bubble);
	ck_assert_double_eq(a->memory.total, b->memory.total);
	ck_assert_double_eq(a->memory.activations, b->memory.activations);
	ck_assert_double_eq(a->hardware_flops_per_iteration, b->hardware_flops_per_iteration);
	for (int s = 0; s < 2; s++)
		ck_assert_double_eq(a->stage_memory[s], b->stage_memory[s]);
}

/*
 * --recompute-layers (Slapo's checkpoint ratio, Chen et al. ASPLOS 2024)
 * on pp 2, 12 layers per stage, N = 3: worked by hand from Korthikanti
 * et al. 2022 (tp 1, no SP, standard attention, b 1):
 *   s b h = 2048 x 2048 = 4,194,304
 *   a layer without recomputation, 34 sbh + 5 a s^2 b
 *     = 142,606,336 + 5 x 16 x 2048^2 (335,544,320) = 478,150,656 B
 *   with full recomputation its input alone, 2 sbh = 8,388,608 B
 *   stage 0 holds min(m 8, p - 0 = 2) = 2 micro-batches in flight, so
 *   N = 3 changes it by 2 x 3 x (8,388,608 - 478,150,656) = -2,818,572,288 B,
 *   plus one layer re-materialised in the backward: + 478,150,656 B,
 *   = -2,340,421,632 B; stage 1 holds 1: 3 x -469,762,048 + 478,150,656
 *   = -931,135,488 B.
 * Time: each recomputed layer runs its forward once more; both stages
 * add 3 forwards per micro-batch, so the bottleneck's 8 slots and the
 * other stage's one slot of fill and drain each grow by 3 layer
 * forwards: recompute = 8 x 3 x fwd, iteration + 9 x 3 x fwd.
 */
START_TEST(test_recompute_layers)
{
	struct cluster c;
	struct model m;
	struct estimate none, full, sel, n0, n3, n12, sel3, full3;
	double fwd;

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	test_load_model(&m, GPT3_1B3_YAML);
	slapo_estimate(&m, &c, PLAN_RECOMPUTE_NONE, -1, &none);
	slapo_estimate(&m, &c, PLAN_RECOMPUTE_FULL, -1, &full);
	slapo_estimate(&m, &c, PLAN_RECOMPUTE_SELECTIVE, -1, &sel);
	slapo_estimate(&m, &c, PLAN_RECOMPUTE_NONE, 0, &n0);
	slapo_estimate(&m, &c, PLAN_RECOMPUTE_NONE, 3, &n3);
	slapo_estimate(&m, &c, PLAN_RECOMPUTE_NONE, 12, &n12);
	slapo_estimate(&m, &c, PLAN_RECOMPUTE_SELECTIVE, 3, &sel3);
	slapo_estimate(&m, &c, PLAN_RECOMPUTE_FULL, 3, &full3);

	/* The endpoints are the plain modes, exactly. */
	assert_same_estimate(&n0, &none);
	assert_same_estimate(&n12, &full);
	/* --recompute full --recompute-layers 3: only the first 3 in full. */
	assert_same_estimate(&full3, &n3);

	ck_assert_double_eq_tol(n3.stage_memory[0] - none.stage_memory[0], -2340421632.0, 1.0);
	ck_assert_double_eq_tol(n3.stage_memory[1] - none.stage_memory[1], -931135488.0, 1.0);
	fwd = none.details.layer_fwd_s;
	ck_assert_double_eq_tol(n3.breakdown.recompute, 8 * 3 * fwd, 1e-12);
	ck_assert_double_eq_tol(n3.iteration_time_s - none.iteration_time_s, 9 * 3 * fwd, 1e-12);
	/* Hardware FLOPs: 3 more layer forwards per stage of each sequence. */
	ck_assert(n3.hardware_flops_per_iteration > none.hardware_flops_per_iteration);
	ck_assert_rel(n3.hardware_flops_per_iteration - none.hardware_flops_per_iteration,
		      (full.hardware_flops_per_iteration - none.hardware_flops_per_iteration) * 6 / 24, 1e-12);

	/* With selective, the other 9 layers keep 34 sbh (no scores): stage 0
	 * changes by 2 x 3 x (8,388,608 - 142,606,336) + 478,150,656
	 * = -327,155,712 B against selective, and the recomputation adds
	 * 3 full forwards less the 3 attention cores selective redid. */
	ck_assert_double_eq_tol(sel3.stage_memory[0] - sel.stage_memory[0], -327155712.0, 1.0);
	ck_assert(sel3.breakdown.recompute > sel.breakdown.recompute);
	ck_assert(sel3.breakdown.recompute < full.breakdown.recompute);
	ck_assert(n3.memory.total < none.memory.total && n3.memory.total > full.memory.total);
	ck_assert(n3.iteration_time_s > none.iteration_time_s && n3.iteration_time_s < full.iteration_time_s);
	cluster_release(&c);
}
END_TEST

/* The optimizer's choice: the fewest layers per stage that fit. */
START_TEST(test_fewest_recompute_layers)
{
	struct cluster c;
	struct model m;
	struct estimate none, e;
	struct plan p, q;
	struct plan_error err;
	char yaml[2048];

	test_load_model(&m, GPT3_1B3_YAML);
	/* Stage 0 without recomputation needs none.stage_memory[0]; give the
	 * GPU 1.5 GB less: each layer saves 2 x 469,762,048 B once one is
	 * re-materialised (+478,150,656), so k = ceil((1.5e9 + 478,150,656) /
	 * 939,524,096) = 3 layers on stage 0, while stage 1 (which needs
	 * less) fits without. */
	test_load_cluster(&c, TEST_CLUSTER_YAML);
	slapo_estimate(&m, &c, PLAN_RECOMPUTE_NONE, -1, &none);
	cluster_release(&c);
	ck_assert(none.stage_memory[1] < none.stage_memory[0] - 1.5e9);
	snprintf(yaml, sizeof(yaml), "%s", TEST_CLUSTER_YAML);
	{
		char *mem = strstr(yaml, "memory: 80 GiB");
		char tail[2048];

		ck_assert_ptr_nonnull(mem);
		snprintf(tail, sizeof(tail), "%s", mem + strlen("memory: 80 GiB"));
		snprintf(mem, sizeof(yaml) - (size_t)(mem - yaml), "memory: %.0f B%s", none.stage_memory[0] - 1.5e9,
			 tail);
	}
	test_load_cluster(&c, yaml);
	slapo_plan(&p, PLAN_RECOMPUTE_NONE, -1);
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &e, &err), "%s", err.message);
	ck_assert(!e.fits);
	ck_assert(estimate_fewest_recompute_layers(&m, &p, NULL, &e, &q));
	ck_assert_int_eq(q.stage_recompute_layers[0], 3);
	ck_assert_int_eq(q.stage_recompute_layers[1], 0);
	ck_assert_msg(estimate_plan(&m, &c, &q, NULL, &e, &err), "%s", err.message);
	ck_assert(e.fits);
	q.stage_recompute_layers[0] = 2;
	ck_assert_msg(estimate_plan(&m, &c, &q, NULL, &e, &err), "%s", err.message);
	ck_assert(!e.fits);
	cluster_release(&c);
}
END_TEST

/*
 * fp8fixed: delayed scaling's per-micro-batch scale updates in the
 * overhead (estimate.c stage_fp8_scaling_s, fp8_recipe_scaling). The toy
 * GPT (2 layers: 8 fp8 linears) on one GPU of 200 TFLOPS fp8, 1 TB/s at
 * full efficiency, a 1 us launch; 4 micro-batches of 1 x 1024. Delayed
 * scaling adds per micro-batch a cat and an update kernel forward and
 * backward (4 launches, 4e-6 s) and 8 x 41,060 = 328,480 bytes of
 * histories and scales (3.2848e-7 s): 4.32848e-6 s, 1.731392e-5 s over
 * the 4. Current scaling keeps no history and adds nothing; the rest of
 * the overhead is the same.
 */
START_TEST(test_fp8_scaling_overhead)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct estimate del, cur;
	struct plan_error err;

	test_load_cluster(&c, "name: t\nnodes: 1\ngpus_per_node: 8\n"
			      "gpu:\n  name: t\n  peak_flops: 100 TFLOPS\n  peak_flops_fp8: 200 TFLOPS\n"
			      "  memory: 80 GiB\n  memory_bandwidth: 1000 GB/s\n  memory_efficiency: 1.0\n"
			      "  gemm_overhead: 0 s\n  launch_overhead: 1 us\n"
			      "intra_node:\n  bandwidth: 100 GB/s\n"
			      "inter_node:\n  nics_per_node: 1\n  nic_bandwidth: 100 Gbit/s\n");
	test_load_model(&m, TOY_MODEL_YAML);
	plan_init(&p);
	p.tp = p.pp = p.dp = 1;
	p.micro_batch = 1;
	p.global_batch = 4;
	p.seq_len = 1024;
	p.precision = PLAN_PRECISION_FP8;
	p.fp8_recipe = PLAN_FP8_DELAYED;
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &del, &err), "%s", err.message);
	p.fp8_recipe = PLAN_FP8_CURRENT;
	ck_assert_msg(estimate_plan(&m, &c, &p, NULL, &cur, &err), "%s", err.message);
	ck_assert_double_eq_tol(del.breakdown.overhead - cur.breakdown.overhead, 1.731392e-5, 1e-15);
	cluster_release(&c);
}
END_TEST

static Suite *
cost_suite(void)
{
	Suite *s = suite_create("cost");
	TCase *tc = tcase_create("cost");

	tcase_add_test(tc, test_bubble);
	tcase_add_test(tc, test_stored_microbatches);
	tcase_add_test(tc, test_layer_activations);
	tcase_add_test(tc, test_fsdp_double_buffer);
	tcase_add_test(tc, test_zero3_layer_grads);
	tcase_add_test(tc, test_loss_logit_memory);
	tcase_add_test(tc, test_loss_logit_memory_megatron);
	tcase_add_test(tc, test_zero3_tensor_unit_memory);
	tcase_add_test(tc, test_largest_matrix_gated);
	tcase_add_test(tc, test_fsdp2_weight_copies);
	tcase_add_test(tc, test_activation_offload);
	tcase_add_test(tc, test_layer_activations_op_sac);
	tcase_add_test(tc, test_layer_activations_op_sac_mla_moe);
	tcase_add_test(tc, test_layer_activations_head_shapes);
	tcase_add_test(tc, test_zero_memory);
	tcase_add_test(tc, test_optimizer_bytes);
	tcase_add_test(tc, test_estimate_invariants);
	tcase_add_test(tc, test_breakdown_terms);
	tcase_add_test(tc, test_invalid_plans);
	tcase_add_test(tc, test_tail_stage);
	tcase_add_test(tc, test_tp_bytes);
	tcase_add_test(tc, test_iteration_one_gpu);
	tcase_add_test(tc, test_gemm_wave_loss);
	tcase_add_test(tc, test_implausible_iteration);
	tcase_add_test(tc, test_dp_overlap_window);
	tcase_add_test(tc, test_pipeline_sends);
	tcase_add_test(tc, test_framework_overheads);
	tcase_add_test(tc, test_tp_overlap);
	tcase_add_test(tc, test_ring_attention_step);
	tcase_add_test(tc, test_ring_attention_p2p_passes);
	tcase_add_test(tc, test_ring_attention_allgather);
	tcase_add_test(tc, test_cp_allgather);
	tcase_add_test(tc, test_fp8_memory);
	tcase_add_test(tc, test_recompute_layers);
	tcase_add_test(tc, test_fewest_recompute_layers);
	tcase_add_test(tc, test_fp8_scaling_overhead);
	tcase_add_test(tc, test_userbuffers);
	tcase_add_test(tc, test_userbuffers_ring_exchange);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(cost_suite)
