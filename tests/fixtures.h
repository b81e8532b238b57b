/*
 * Setups that more than one unit test builds (litest-style helpers, as
 * libinput's test/litest.c keeps its devices): the cluster, model and
 * plan a test's hand-worked numbers start from, and the checks more than
 * one test makes. Each says what those numbers rely on; a test changes
 * the plan after the call, not the fixture. Linked into every unit test
 * (tests/meson.build).
 */
#pragma once

#include <stddef.h>

#include "plan/cluster.h"
#include "plan/model.h"
#include "plan/plan.h"

/*
 * One node of 100 TFLOP/s, 1 TB/s GPUs (memory efficiency 1) whose flash
 * attention runs at 0.5 of peak forward and 0.25 backward, plus 10 us a
 * call: test-compute.c's test_flash_attention works its times out by hand.
 */
#define FIXTURE_FLASH_CLUSTER_YAML \
	"name: t\nnodes: 1\ngpus_per_node: 8\n" \
	"gpu:\n  name: t\n  peak_flops: 100 TFLOPS\n  memory: 80 GiB\n" \
	"  memory_bandwidth: 1000 GB/s\n  memory_efficiency: 1.0\n" \
	"  attention_fwd_efficiency: 0.5\n  attention_bwd_efficiency: 0.25\n" \
	"  attention_overhead: 10 us\n" \
	"intra_node:\n  bandwidth: 100 GB/s\n" \
	"inter_node:\n  nics_per_node: 1\n  nic_bandwidth: 100 Gbit/s\n"

/* A toy Llama: 2 layers, h 1024, 8 heads of 128 with 2 KV heads (kvd
 * 256), SwiGLU of 2816, RMSNorm, rotary, V 32768, s 1024. */
#define FIXTURE_TOY_LLAMA_YAML \
	"name: l\nlayers: 2\nhidden: 1024\nheads: 8\nkv_heads: 2\nffn_hidden: 2816\n" \
	"gated_mlp: true\nnorm: rmsnorm\nposition_embedding: rotary\nvocab: 32768\nseq_len: 1024\n"

/* One GPU (tp = pp = dp = 1), one sequence of 1,024 tokens (micro-batch
 * and global batch 1) with flash attention. */
void fixture_one_gpu_plan(struct plan *p);

/*
 * The ZeRO paper's setting (Rajbhandari et al. 2020, Fig. 1: N_d = 64):
 * GPT-3 175B (GPT3_YAML) on the test cluster (TEST_CLUSTER_YAML), pure
 * data parallelism, tp = pp = 1, dp 64, one sequence of 2048 tokens a
 * rank (global batch 64), ZeRO stage @zero.
 */
void fixture_gpt3_dp64(struct cluster *c, struct model *m, struct plan *p, int zero);

/* Case @i of a table of bad cluster profiles: loading @yaml fails with an
 * error that contains @message, at @line:@column of the file. */
void fixture_cluster_refused(size_t i, const char *yaml, const char *message, int line, int column);
