/* plan-cli muon: Muon's Newton-Schulz FLOPs and time, its optimizer state
 * and its checks (src/core/muon.c; docs/research/framework-data.md,
 * "Muon"). */
#include <math.h>
#include <string.h>

#include "fixtures.h"
#include "plan/estimate.h"
#include "plan/framework.h"
#include "plan/muon.h"
#include "testutil.h"

/* One node of 100 TFLOP/s GPUs, GEMMs at efficiency 1 with no per-GEMM
 * cost, 1 TB/s HBM at efficiency 1. */
#define NS_CLUSTER_YAML \
	"name: t\nnodes: 1\ngpus_per_node: 8\n" \
	"gpu:\n  name: t\n  peak_flops: 100 TFLOPS\n  memory: 80 GiB\n" \
	"  memory_bandwidth: 1000 GB/s\n  memory_efficiency: 1.0\n  launch_overhead: 1 us\n" \
	"  gemm_efficiency_max: 1.0\n  gemm_overhead: 0 s\n" \
	"intra_node:\n  bandwidth: 100 GB/s\n" \
	"inter_node:\n  nics_per_node: 1\n  nic_bandwidth: 100 Gbit/s\n"

/* A toy GPT: 2 layers, h 1024, 8 heads of 128 (no GQA), an MLP of 4096
 * (not gated), V 32768. */
#define NS_MODEL_YAML \
	"name: g\nlayers: 2\nhidden: 1024\nheads: 8\nffn_hidden: 4096\n" \
	"norm: rmsnorm\nposition_embedding: rotary\nvocab: 32768\nseq_len: 1024\n"

START_TEST(test_ns_flops)
{
	/* A 4 x 8 matrix (m 4, n 8), 5 iterations: X X^T 2 m m n = 256,
	 * A A 2 m^3 = 128, B X 2 m m n = 256: 640 an iteration, 3200. */
	ck_assert_rel(muon_ns_flops(4, 8, 5), 3200.0, 1e-12);
	/* The taller one is transposed first: the same. */
	ck_assert_rel(muon_ns_flops(8, 4, 5), 3200.0, 1e-12);
	/* Kimi K2's expert fc1, 4096 x 7168, 5 iterations:
	 * 5 (481,036,337,152 + 137,438,953,472) = 3.09237645312e12. */
	ck_assert_rel(muon_ns_flops(4096, 7168, 5), 3.09237645312e12, 1e-12);
}
END_TEST

START_TEST(test_ns_time)
{
	struct cluster c;

	test_load_cluster(&c, NS_CLUSTER_YAML);
	/* 1024 x 4096, 5 iterations: 5 (4 x 1024^2 x 4096 + 2 x 1024^3) =
	 * 9.6637e10 FLOPs at 100 TFLOP/s = 0.96637 ms; each GEMM is
	 * compute-bound (the largest moves 2 (2 x 1024 x 4096 + 1024^2) B =
	 * 18.9 us at 1 TB/s against its 85.9 us). */
	ck_assert_rel(muon_ns_time(&c, 1024, 4096, 5), 9.663676416e-4, 1e-9);
	ck_assert_rel(muon_ns_time(&c, 0, 4096, 5), 0.0, 1e-12);
	cluster_release(&c);
}
END_TEST

START_TEST(test_ns_stage)
{
	struct cluster c;
	struct model m;
	struct plan p;

	test_load_cluster(&c, NS_CLUSTER_YAML);
	test_load_model(&m, NS_MODEL_YAML);
	fixture_one_gpu_plan(&p);
	p.dp = 2;
	/* A layer's matrices: Q, K, V and the projection, 1024 x 1024, at
	 * 5 x 6 x 1024^3 / 1e14 = 0.322123 ms each; fc1 and fc2, 4096 x
	 * 1024, 0.966368 ms each (test_ns_time): 3.221225 ms a layer,
	 * 6.442451 ms for two, over dp 2: 3.221225 ms. */
	ck_assert_rel(muon_stage_ns_time(&m, &p, &c, 0), 3.221225472e-3, 1e-9);
	/* dp 16: the even share, 0.402653 ms, is less than the largest
	 * matrix, which one rank orthogonalizes whole: 0.966368 ms. */
	p.dp = 16;
	ck_assert_rel(muon_stage_ns_time(&m, &p, &c, 0), 9.663676416e-4, 1e-9);
	/* tp 2 (blockwise): each rank its shards, Q 512 x 1024 at 5 (4 x
	 * 512^2 x 1024 + 2 x 512^3) / 1e14 = 0.067109 ms, and so K, V and
	 * the projection; fc1 and fc2 2048 x 1024: 5 (4 x 1024^2 x 2048 +
	 * 2 x 1024^3) / 1e14 = 0.536871 ms; a layer 1.342177 ms, two 2.684355
	 * ms, over dp 2: 1.342177 ms. */
	p.dp = 2;
	p.tp = 2;
	ck_assert_rel(muon_stage_ns_time(&m, &p, &c, 0), 1.34217728e-3, 1e-9);
	cluster_release(&c);
}
END_TEST

/* The toy Llama (fixtures.h) on 2 GPUs, ZeRO @zero, stepped by @fw. */
static bool
toy_llama_estimate(const struct framework *fw, int zero, struct estimate *e, struct plan_error *err)
{
	struct cluster c;
	struct model m;
	struct plan p;
	struct estimate_options o = { .framework = fw };
	bool ok;

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	test_load_model(&m, FIXTURE_TOY_LLAMA_YAML);
	fixture_one_gpu_plan(&p);
	p.dp = 2;
	p.global_batch = 2;
	p.zero = zero;
	plan_error_clear(err);
	ok = estimate_plan(&m, &c, &p, &o, e, err);
	cluster_release(&c);
	return ok;
}

START_TEST(test_state_bytes)
{
	struct framework adam, muon;
	struct estimate a, u;
	struct plan_error err;

	framework_init_default(&adam);
	framework_init_default(&muon);
	muon.optimizer = FRAMEWORK_OPTIMIZER_MUON;
	ck_assert(toy_llama_estimate(&adam, 1, &a, &err));
	ck_assert(toy_llama_estimate(&muon, 1, &u, &err));
	/* The toy Llama (biases on, the schema's default; embeddings tied):
	 * a layer's Q 1024^2, K and V 1024 x 256, projection 1024^2, SwiGLU
	 * 3 x 1024 x 2816, their biases 1536 + 1024 + 5632 + 1024 and two
	 * norms of 1024: 11,283,456; two layers 22,566,912, with the
	 * embedding (32768 x 1024 = 33,554,432) and the final norm (1024,
	 * counted with the output end): 56,122,368. Adam: 12 B each over
	 * dp 2, 336,734,208 B. Muon: the embedding and the output end at 12,
	 * the layers at 8: (12 x 33,555,456 + 8 x 22,566,912) / 2 =
	 * (402,665,472 + 180,535,296) / 2 = 291,600,384 B. */
	ck_assert_rel(a.memory.optimizer, 336734208.0, 1e-9);
	ck_assert_rel(u.memory.optimizer, 291600384.0, 1e-9);
	/* And the step costs more: the Newton-Schulz iterations. */
	ck_assert(u.breakdown.optimizer > a.breakdown.optimizer);
}
END_TEST

START_TEST(test_refused)
{
	struct framework muon;
	struct estimate e;
	struct plan_error err;
	struct cluster c;
	struct model m;
	struct plan p;
	struct estimate_options o = { .framework = &muon };

	framework_init_default(&muon);
	muon.optimizer = FRAMEWORK_OPTIMIZER_MUON;
	/* LayerWiseDistributedOptimizer is ZeRO-1 alone. */
	ck_assert(!toy_llama_estimate(&muon, 0, &e, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "use --zero 1"));
	ck_assert(!toy_llama_estimate(&muon, 3, &e, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "got --zero 3,"));
	/* No Newton-Schulz for a hybrid model's layers. */
	test_load_cluster(&c, TEST_CLUSTER_YAML);
	test_load_model(&m, "name: h\nlayers: 2\nhidden: 1024\nheads: 8\nffn_hidden: 4096\n"
			    "vocab: 32768\nseq_len: 1024\nnorm: rmsnorm\nposition_embedding: rotary\n"
			    "hybrid_pattern: 'M*'\nmamba:\n  state_dim: 128\n  head_dim: 64\n  heads: 32\n"
			    "  groups: 8\n  conv_kernel: 4\n  chunk_size: 128\n");
	fixture_one_gpu_plan(&p);
	p.zero = 1;
	plan_error_clear(&err);
	ck_assert(!estimate_plan(&m, &c, &p, &o, &e, &err));
	ck_assert_ptr_nonnull(strstr(err.message, "hybrid model"));
	cluster_release(&c);
}
END_TEST

static Suite *
muon_suite(void)
{
	Suite *s = suite_create("muon");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_ns_flops);
	tcase_add_test(tc, test_ns_time);
	tcase_add_test(tc, test_ns_stage);
	tcase_add_test(tc, test_state_bytes);
	tcase_add_test(tc, test_refused);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(muon_suite)
