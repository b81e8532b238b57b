/* Shared scaffolding of the Check unit tests. */
#pragma once

#include <check.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "io/profile_load.h"
#include "io/profile_path.h"
#include "plan/cluster.h"
#include "plan/error.h"
#include "plan/plan.h"
#include "plan/model.h"

/* A Selene-like cluster (DGX A100, 8 x 200 Gbit/s) with round numbers
 * so that expected values can be worked out by hand: intra 300 GB/s at
 * 0.75 = 225 GB/s, NIC share 25 GB/s at 0.85 = 21.25 GB/s. */
#define TEST_CLUSTER_YAML \
	"name: test-a100\n" \
	"nodes: 64\n" \
	"gpus_per_node: 8\n" \
	"gpu:\n" \
	"  name: A100\n" \
	"  peak_flops: 312 TFLOPS\n" \
	"  memory: 80 GiB\n" \
	"  memory_bandwidth: 2039 GB/s\n" \
	"  memory_efficiency: 0.8\n" \
	"  gemm_efficiency_max: 0.75\n" \
	"  gemm_overhead: 5 us\n" \
	"  reserved_memory: 1 GiB\n" \
	"intra_node:\n" \
	"  bandwidth: 300 GB/s\n" \
	"  latency: 3 us\n" \
	"  efficiency: 0.75\n" \
	"inter_node:\n" \
	"  nics_per_node: 8\n" \
	"  nic_bandwidth: 200 Gbit/s\n" \
	"  latency: 5 us\n" \
	"  efficiency: 0.85\n" \
	"  message_half_size: 0 B\n"

/* A toy cluster whose costs are exact by hand: GEMMs at a flat 0.5 x
 * 100e12 = 5e13 FLOP/s (no per-kernel overhead), element-wise work at
 * 1e12 B/s, NVLink 1e11 B/s with alpha 1 us, and one 100 Gbit/s NIC per
 * node of 4 GPUs: 12.5e9 / 4 x 0.8 = 2.5e9 B/s per GPU, alpha 10 us.
 * No network post cost (net_overhead 0): with NCCL's 1 us the 1 us NVLink
 * steps of a ring across nodes would take 3 us (test-collective.c's
 * test_net_overhead tests that floor; these sums keep to what they test). */
#define TOY_CLUSTER_YAML TOY_CLUSTER_YAML_LAUNCH("0 s")

/* The toy cluster with a launch cost per element-wise kernel. */
#define TOY_CLUSTER_YAML_LAUNCH(launch) \
	"name: toy\n" \
	"nodes: 2\n" \
	"gpus_per_node: 4\n" \
	"gpu:\n" \
	"  name: toy\n" \
	"  peak_flops: 100 TFLOPS\n" \
	"  memory: 80 GiB\n" \
	"  memory_bandwidth: 1000 GB/s\n" \
	"  memory_efficiency: 1.0\n" \
	"  gemm_efficiency_max: 0.5\n" \
	"  gemm_overhead: 0 s\n" \
	"  launch_overhead: " launch "\n" \
	"  attention_overhead: 0 s\n" \
	"intra_node:\n" \
	"  bandwidth: 100 GB/s\n" \
	"  latency: 1 us\n" \
	"  efficiency: 1.0\n" \
	"inter_node:\n" \
	"  nics_per_node: 1\n" \
	"  nic_bandwidth: 100 Gbit/s\n" \
	"  latency: 10 us\n" \
	"  efficiency: 0.8\n" \
	"  message_half_size: 0 B\n" \
	"  net_overhead: 0 s\n"

/* A toy GPT (tied embeddings, biases, LayerNorm, learned positions):
 * L 2, h 1024, a 8 (d 128), ffn 4h, V 32768, s 1024. Per layer
 * 12 h^2 + 13 h = 12,596,224 parameters (SC21 Sec. 5.1). */
#define TOY_MODEL_YAML \
	"name: toy\nlayers: 2\nhidden: 1024\nheads: 8\nvocab: 32768\nseq_len: 1024\n"

#define GPT3_YAML \
	"name: gpt3\nlayers: 96\nhidden: 12288\nheads: 96\nvocab: 51200\nseq_len: 2048\n"

/* GPT-3 175B as SC21 ran it on 1536 GPUs: TP 8, PP 12, DP 16, micro-batch
 * 1, global batch 1536, 2048 tokens, full recomputation. */
static inline void
gpt3_plan(struct plan *p)
{
	plan_init(p);
	p->tp = 8;
	p->pp = 12;
	p->dp = 16;
	p->micro_batch = 1;
	p->global_batch = 1536;
	p->seq_len = 2048;
	p->recompute = PLAN_RECOMPUTE_FULL;
}

static inline void
test_load_cluster(struct cluster *c, const char *yaml)
{
	struct plan_error err;

	plan_error_clear(&err);
	ck_assert_msg(cluster_load_string(c, "test.yaml", yaml, &err), "%s", err.message);
}

static inline void
test_load_model(struct model *m, const char *yaml)
{
	struct plan_error err;

	plan_error_clear(&err);
	ck_assert_msg(model_load_string(m, "test.yaml", yaml, &err), "%s", err.message);
}

/* Load the framework profile given as YAML text @yaml into @fw. */
static inline void
test_load_framework(struct framework *fw, const char *yaml)
{
	struct plan_error err;

	plan_error_clear(&err);
	ck_assert_msg(framework_load_string(fw, "test.yaml", yaml, &err), "%s", err.message);
}

/* Load the bundled profile @name of @kind (a model, cluster, compressor
 * or framework) into @obj; PLAN_CLI_PATH must name the source root. */
static inline void
test_load_profile(enum profile_kind kind, const char *name, void *obj)
{
	char path[PATH_MAX];
	struct plan_error err;
	bool ok;

	plan_error_clear(&err);
	ck_assert_msg(profile_resolve(kind, name, path, sizeof(path), &err), "%s", err.message);
	switch (kind) {
	case PROFILE_MODEL: ok = model_load_file(obj, path, &err); break;
	case PROFILE_CLUSTER: ok = cluster_load_file(obj, path, &err); break;
	case PROFILE_COMPRESSOR: ok = compressor_load_file(obj, path, &err); break;
	default: ok = framework_load_file(obj, path, &err); break;
	}
	ck_assert_msg(ok, "%s", err.message);
}

/* Profiles resolve from the source tree (PLAN_TEST_SOURCE_ROOT, which meson test sets). */
static inline void
test_setup_paths(void)
{
	const char *r = getenv("PLAN_TEST_SOURCE_ROOT");

	ck_assert_msg(r != NULL, "PLAN_TEST_SOURCE_ROOT is not set (run through meson test)");
	setenv("PLAN_CLI_PATH", r, 1);
	profile_path_init(NULL);
}

/* Whether to run a smaller case set: PLAN_TEST_QUICK is set and not "0"
 * (the valgrind test setup sets it). */
static inline bool
test_quick(void)
{
	const char *q = getenv("PLAN_TEST_QUICK");

	return q && *q && strcmp(q, "0") != 0;
}

/* A --time-limit (seconds per MILP, per --exhaustive shape) that never
 * binds, even under valgrind on a loaded machine: a search whose result a
 * test checks must not depend on how fast the machine is (issue 23). The
 * search's default, SEARCH_DEFAULT_TIME_LIMIT_S, is 2 s. */
#define TEST_NO_TIME_LIMIT_S 1e6

/* Relative tolerance check: |a - b| <= rel * |b|. */
#define ck_assert_rel(a, b, rel) \
	ck_assert_msg(fabs((double)(a) - (double)(b)) <= (rel) * fabs((double)(b)), \
		      "%s = %.10g, expected %.10g (rel tol %g)", #a, (double)(a), (double)(b), (double)(rel))

#define TEST_MAIN(suite_fn) \
	int main(void) \
	{ \
		SRunner *sr; \
		int failed; \
		gsl_set_error_handler_off(); \
		sr = srunner_create(suite_fn()); \
		srunner_run_all(sr, CK_NORMAL); \
		failed = srunner_ntests_failed(sr); \
		srunner_free(sr); \
		return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE; \
	}
