#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/profile_load.h"
#include "io/profile_path.h"
#include "plan/cluster.h"
#include "plan/model.h"
#include "fixtures.h"
#include "testutil.h"

START_TEST(test_model_defaults)
{
	struct model m;

	test_load_model(&m, GPT3_YAML);
	ck_assert_str_eq(m.name, "gpt3");
	ck_assert_int_eq(m.kv_heads, 96);        /* default: heads */
	ck_assert_int_eq(m.ffn_hidden, 4 * 12288); /* default: 4h */
	ck_assert(m.tied_embeddings);
	ck_assert(m.bias);
	ck_assert_int_eq(m.norm, MODEL_NORM_LAYERNORM);
}
END_TEST

struct bad_profile {
	const char *yaml;
	const char *message; /* substring of the error */
	int line, column;
};

static const struct bad_profile bad_models[] = {
	{ "name: x\nlayers: 2\nhiden: 4\n", "unknown key 'hiden'; did you mean 'hidden'?", 3, 1 },
	{ "name: x\nlayers: 2\nlayers: 3\n", "duplicate key 'layers'", 3, 1 },
	{ "name: x\nlayers: 2\nhidden: 8\nheads: 2\nseq_len: 4\n", "missing required key 'vocab'", 1, 1 },
	{ "name: x\nlayers: two\n", "'layers' must be a whole number, got 'two'", 2, 9 },
	/* issue 25, twenty-third session: a name split the report's lines */
	{ "name: \"a\\nb\"\nlayers: 2\n", "'name' holds a control character", 1, 7 },
	{ "name: x\nlayers: 0\n", "'layers' must be at least 1", 2, 9 },
	{ "name: x\nnorm: batchnorm\n", "unknown value 'batchnorm' for 'norm' (valid: layernorm, rmsnorm)", 2, 7 },
	{ "", "empty document", 1, 1 },
	{ "- a\n- b\n", "expected a mapping", 1, 1 },
	{ "name: [x\n", "invalid YAML", 2, 1 },
	{ "name: x\nlayers: 2\nhidden: 10\nheads: 3\nvocab: 5\nseq_len: 4\n",
	  "hidden (10) must be divisible by heads (3)", 3, 9 },
	{ "name: x\nlayers:\n  deep: 1\n", "'layers' must be a single value, not a mapping", 3, 3 },
	{ "a: 1\n---\nb: 2\n", "only one YAML document", 2, 1 },
};

START_TEST(test_model_errors)
{
	const struct bad_profile *b = &bad_models[_i];
	struct plan_error err;
	struct model m;

	plan_error_clear(&err);
	ck_assert(!model_load_string(&m, "bad.yaml", b->yaml, &err));
	ck_assert_int_eq(err.kind, PLAN_ERR_INPUT);
	ck_assert_msg(strstr(err.message, b->message), "got '%s'", err.message);
	ck_assert_str_eq(err.file, "bad.yaml");
	ck_assert_int_eq(err.line, b->line);
	ck_assert_int_eq(err.column, b->column);
}
END_TEST

START_TEST(test_cluster_units)
{
	struct cluster c;

	test_load_cluster(&c, TEST_CLUSTER_YAML);
	/* 200 Gbit/s per NIC = 25e9 B/s; 8 NICs over 8 GPUs = 25e9 B/s each. */
	ck_assert_rel(c.inter.nic_bandwidth_Bps, 25e9, 1e-12);
	ck_assert_rel(cluster_nic_share_Bps(&c), 25e9, 1e-12);
	ck_assert_rel(c.gpu.memory_bytes, 80.0 * 1073741824.0, 1e-12);
	ck_assert_rel(c.gpu.peak_flops, 312e12, 1e-12);
	ck_assert_int_eq(cluster_gpus(&c), 512);
	cluster_release(&c);
}
END_TEST

START_TEST(test_cluster_defaults)
{
	struct cluster c;

	test_load_cluster(&c,
		"name: d\nnodes: 1\ngpus_per_node: 4\ngpu:\n  name: g\n  peak_flops: 100 TFLOPS\n"
		"  memory: 16 GiB\n  memory_bandwidth: 900 GB/s\nintra_node:\n  bandwidth: 50 GB/s\n"
		"inter_node:\n  nics_per_node: 1\n  nic_bandwidth: 25 Gbit/s\n");
	/* The link defaults and their sources (cluster_load.c; framework-data.md
	 * Sec. 27): NCCL's Ring/Simple step over NVLink, 3.4 us, and over the
	 * network, 9.6 us (src/graph/tuning.cc, hwLat; 9.6 us up to 2.17);
	 * nccl-tests bus bandwidth over line rate, 0.75 inside a node and 0.85
	 * across; Hockney's n_1/2, 64 KiB = 65536 B; no cluster pcie_bandwidth
	 * (0), so the GPU's: an unspecified generation's PCIe Gen4 x16, 25 GB/s
	 * measured to host memory; 120 s to restart. */
	ck_assert_rel(c.intra.latency_s, 3.4e-6, 1e-12);
	ck_assert_rel(c.inter.latency_s, 9.6e-6, 1e-12);
	ck_assert_rel(c.intra.efficiency, 0.75, 1e-12);
	ck_assert_rel(c.inter.efficiency, 0.85, 1e-12);
	ck_assert_rel(c.inter.half_size_bytes, 65536.0, 1e-12);
	ck_assert(c.pcie_bandwidth_Bps == 0.0);
	ck_assert_rel(c.gpu.pcie_bandwidth_Bps, 25e9, 1e-12);
	ck_assert_rel(cluster_pcie_bandwidth_Bps(&c), 25e9, 1e-12);
	ck_assert_rel(c.restart_s, 120.0, 1e-12);
	ck_assert_rel(c.gpu.memory_efficiency, 0.8, 1e-12);
	ck_assert_rel(c.gpu.gemm_efficiency_max, 0.75, 1e-12);
	ck_assert_rel(c.gpu.reserved_bytes, 1073741824.0, 1e-12);
	/* 25 Gbit/s over 4 GPUs: 3.125e9 / 4 = 0.78125e9 B/s each. */
	ck_assert_rel(cluster_nic_share_Bps(&c), 0.78125e9, 1e-12);
	cluster_release(&c);
}
END_TEST

START_TEST(test_cluster_errors)
{
	static const struct bad_profile cases[] = {
		{ "name: c\nnodes: 1\ngpus_per_node: 8\ngpu:\n  name: g\n  peak_flops: 312\n",
		  "'peak_flops': missing unit in '312'", 6, 15 },
		{ "name: c\nnodes: 1\ngpus_per_node: 8\ngpu:\n  name: g\n  memory: 80 GB/s\n",
		  "'memory': 'GB/s' is a bandwidth unit, expected a size", 6, 11 },
		{ "name: c\nnodes: 1\ngpus_per_node: 8\ngpu:\n  name: g\n  memory: 0 GiB\n",
		  "'memory' must be greater than 0", 6, 11 },
		{ "name: c\nnodes: 1\ngpus_per_node: 8\ngpu:\n  name: g\n  memroy: 1 GiB\n",
		  "did you mean 'memory'?", 6, 3 },
		{ "name: c\nnodes: 1\ngpus_per_node: 8\ngpu:\n  name: g\n  gemm_efficiency: [[1e9, 0.5], [1e8, 0.6]]\n",
		  "strictly increasing", 6, 33 },
		{ "name: c\nnodes: 1\ngpus_per_node: 8\ngpu:\n  name: g\n  memory_efficiency: 1.5\n",
		  "'memory_efficiency' must be at most 1", 6, 22 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		fixture_cluster_refused(i, cases[i].yaml, cases[i].message, cases[i].line, cases[i].column);
}
END_TEST

START_TEST(test_gemm_curve)
{
	struct cluster c;
	double e;

	test_load_cluster(&c, TEST_CLUSTER_YAML
		"#\n");
	/* Parametric: at F = peak * 0.75 * 5 us = 1.17e9 FLOPs the ideal time
	 * equals the 5 us overhead, so efficiency = 0.75 / 2 = 0.375. */
	ck_assert_rel(cluster_gemm_efficiency(&c, 312e12 * 0.75 * 5e-6), 0.375, 1e-12);
	cluster_release(&c);

	{
		char yaml[2048];

		snprintf(yaml, sizeof(yaml), "%s",
			 "name: c\nnodes: 1\ngpus_per_node: 8\ngpu:\n  name: g\n  peak_flops: 312 TFLOPS\n"
			 "  memory: 80 GiB\n  memory_bandwidth: 2039 GB/s\n"
			 "  gemm_efficiency: [[1e9, 0.2], [1e11, 0.6], [1e13, 0.8]]\n"
			 "intra_node:\n  bandwidth: 300 GB/s\ninter_node:\n  nics_per_node: 8\n"
			 "  nic_bandwidth: 200 Gbit/s\n");
		test_load_cluster(&c, yaml);
	}
	/* At the points: exact; outside: clamped (GSL does not extrapolate). */
	ck_assert_rel(cluster_gemm_efficiency(&c, 1e9), 0.2, 1e-9);
	ck_assert_rel(cluster_gemm_efficiency(&c, 1e11), 0.6, 1e-9);
	ck_assert_rel(cluster_gemm_efficiency(&c, 1e8), 0.2, 1e-12);
	ck_assert_rel(cluster_gemm_efficiency(&c, 1e15), 0.8, 1e-12);
	/* Steffen interpolation is monotone: strictly between neighbours. */
	e = cluster_gemm_efficiency(&c, 1e10);
	ck_assert(e > 0.2 && e < 0.6);
	e = cluster_gemm_efficiency(&c, 1e12);
	ck_assert(e > 0.6 && e < 0.8);
	cluster_release(&c);
}
END_TEST

/*
 * An unknown key with no near miss lists the valid keys; a schema longer
 * than the message holds (the framework's) ends "and N more: see
 * plan-cli-profiles(5)", and the keys listed and N add up to the table.
 * Before, the list stopped without a word after pipeline_schedules and left
 * out the 36 keys from attention_speed on (host_syncs, microbatch_syncs, ...).
 */
START_TEST(test_unknown_key_list)
{
	struct plan_error err;
	struct framework fw;
	struct model m;
	const char *list, *more;
	int rows = 0, listed = 1, left = -1;

	plan_error_clear(&err);
	ck_assert(!framework_load_string(&fw, "f.yaml", "name: f\nzzzzzzzzzzzzzzzz: 1\n", &err));
	list = strstr(err.message, "(valid keys: name, description, ");
	more = strstr(err.message, ", and ");
	ck_assert_msg(list && more, "got '%s'", err.message);
	ck_assert_msg(strcmp(more + strspn(more, ", and 0123456789"), "more: see plan-cli-profiles(5))") == 0,
		      "got '%s'", err.message);
	left = atoi(more + strlen(", and "));
	for (const char *c = list; c < more; c++)
		listed += *c == ',';
	for (const struct schema_key *k = framework_schema; k->key; k++)
		rows++;
	ck_assert_int_gt(left, 0);
	ck_assert_int_eq(listed + left, rows);

	/* The model's keys fit: all of them, the last one too, and no tail. */
	plan_error_clear(&err);
	ck_assert(!model_load_string(&m, "m.yaml", "name: m\nzzzzzzzzzzzzzzzz: 1\n", &err));
	ck_assert_msg(strstr(err.message, ", kind)") && !strstr(err.message, "more:"), "got '%s'", err.message);
}
END_TEST

/*
 * Keys that count things (buffers, copies, entries, launches, gathers,
 * SMs) are whole numbers (issue 25, twenty-third session): before,
 * userbuffers_allgather 2.5 loaded and sized 2.5 Userbuffers buffers, in a
 * profile and through --framework-set alike. Each is refused with its name
 * in a profile (line 2, column after the key) and by schema_set_text; a
 * whole value loads as that int.
 */
START_TEST(test_framework_counts_whole)
{
	static const char *const counts[] = {
		"userbuffers_allgather", "userbuffers_reduce_scatter", "grad_bucket_buffers",
		"zero3_grad_copies", "fp8_amax_history", "zero3_tensor_launches", "moe_param_gathers",
		"moe_dispatcher_sms", "userbuffers_reduce_scatter_ring_exchange",
	};
	struct plan_error err;
	struct framework fw;
	char yaml[128], want[96];

	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		snprintf(yaml, sizeof(yaml), "name: f\n%s: 2.5\n", counts[i]);
		snprintf(want, sizeof(want), "'%s' must be a whole number, got '2.5'", counts[i]);
		plan_error_clear(&err);
		ck_assert(!framework_load_string(&fw, "f.yaml", yaml, &err));
		ck_assert_msg(strstr(err.message, want), "%s: got '%s'", counts[i], err.message);
		ck_assert_int_eq(err.line, 2);
		framework_init_default(&fw);
		plan_error_clear(&err);
		ck_assert(!schema_set_text(framework_schema, "--framework-set", counts[i], "2.5", &fw, &err));
		ck_assert_msg(strstr(err.message, want), "%s: got '%s'", counts[i], err.message);
		/* Past the largest double is past the key's range, not 'not whole'. */
		plan_error_clear(&err);
		ck_assert(!schema_set_text(framework_schema, "--framework-set", counts[i], "1e309", &fw, &err));
		ck_assert_msg(strstr(err.message, "must be at most"), "%s: got '%s'", counts[i], err.message);
	}
	plan_error_clear(&err);
	ck_assert_msg(framework_load_string(&fw, "f.yaml", "name: f\nuserbuffers_allgather: 8\n"
					    "userbuffers_reduce_scatter: 4\n", &err), "%s", err.message);
	ck_assert_int_eq(fw.userbuffers_allgather, 8);
	ck_assert_int_eq(fw.userbuffers_reduce_scatter, 4);
}
END_TEST

/*
 * plan-cli ubrs: userbuffers_reduce_scatter_ring_exchange counts some of
 * the reduce-scatters: at most userbuffers_reduce_scatter, in a profile
 * (the error at the key, line 3) and after --framework-set's pairs
 * (framework_check, once they are all set) alike; equal is accepted, the
 * default is 0.
 */
START_TEST(test_framework_ring_exchange_bound)
{
	struct plan_error err;
	struct framework fw;

	plan_error_clear(&err);
	ck_assert(!framework_load_string(&fw, "f.yaml", "name: f\nuserbuffers_reduce_scatter: 4\n"
					 "userbuffers_reduce_scatter_ring_exchange: 5\n", &err));
	ck_assert_msg(strstr(err.message, "'userbuffers_reduce_scatter_ring_exchange' (5) must be at most "
					  "userbuffers_reduce_scatter (4)"), "got '%s'", err.message);
	ck_assert_int_eq(err.line, 3);
	plan_error_clear(&err);
	ck_assert_msg(framework_load_string(&fw, "f.yaml", "name: f\nuserbuffers_reduce_scatter: 4\n"
					    "userbuffers_reduce_scatter_ring_exchange: 4\n", &err), "%s", err.message);
	ck_assert_int_eq(fw.userbuffers_reduce_scatter_ring_exchange, 4);
	ck_assert(framework_load_string(&fw, "f.yaml", "name: f\nuserbuffers_reduce_scatter: 4\n", &err));
	ck_assert_int_eq(fw.userbuffers_reduce_scatter_ring_exchange, 0);
	ck_assert_msg(framework_set(&fw, "--framework-set", "userbuffers_reduce_scatter_ring_exchange", "2", &err),
		      "%s", err.message);
	ck_assert_int_eq(fw.userbuffers_reduce_scatter_ring_exchange, 2);
	ck_assert(framework_check(&fw, "--framework-set", &err));
	plan_error_clear(&err);
	ck_assert(framework_set(&fw, "--framework-set", "userbuffers_reduce_scatter", "1", &err));
	ck_assert(!framework_check(&fw, "--framework-set", &err));
	ck_assert_msg(strstr(err.message, "(2) must be at most userbuffers_reduce_scatter (1)"), "got '%s'",
		      err.message);
}
END_TEST

/*
 * frameworks/megatron-bridge.yaml is 'base: nemo' with the keys that
 * Megatron-Bridge 067f987's perf recipes change (perf_recipes/_common.py
 * _benchmark_common; the profile's header cites each): every key below
 * loads as nemo.yaml has it and as megatron-bridge.yaml sets it.
 * reduce_bytes 4 -> 2 (grad_reduce_in_fp32 False), grad_check_bytes
 * 4 -> 0 (check_for_nan_in_grad False), loss_syncs 2 -> 0
 * (check_for_nan_in_loss False), host_syncs 1 -> 2 (log_interval 1),
 * step_bytes 6 -> 12 (the bf16 main_grad shard cast to fp32: 2 read + 4
 * written), and TE 2.18's cross entropy: loss_fwd_bytes 12 -> 8 (2 + 2
 * read, 4 written), loss_bwd_bytes 8 -> 14 (4 + 4 in place, 4 + 2 the
 * cast), loss_logit_memory 4 -> 6 (bf16 logits beside the fp32
 * gradient). A key the profile leaves alone (cuda_graphs, main_grad,
 * p2p_syncs, moe_dispatcher) keeps nemo's value.
 */
START_TEST(test_megatron_bridge_profile)
{
	static const struct {
		const char *key;
		size_t offset;
		double nemo, bridge;
	} keys[] = {
		{ "reduce_bytes", offsetof(struct framework, reduce_bytes), 4.0, 2.0 },
		{ "grad_check_bytes", offsetof(struct framework, grad_check_bytes), 4.0, 0.0 },
		{ "loss_syncs", offsetof(struct framework, loss_syncs), 2.0, 0.0 },
		{ "host_syncs", offsetof(struct framework, host_syncs), 1.0, 2.0 },
		{ "step_bytes", offsetof(struct framework, step_bytes), 6.0, 12.0 },
		{ "loss_fwd_bytes", offsetof(struct framework, loss_fwd_bytes), 12.0, 8.0 },
		{ "loss_bwd_bytes", offsetof(struct framework, loss_bwd_bytes), 8.0, 14.0 },
		{ "loss_logit_memory", offsetof(struct framework, loss_logit_memory), 4.0, 6.0 },
		{ "p2p_syncs", offsetof(struct framework, p2p_syncs), 1.0, 1.0 },
		{ "host_launch_overhead", offsetof(struct framework, host_launch_s), 12e-6, 12e-6 },
		{ "optimizer_passes", offsetof(struct framework, optimizer_passes), 4.0, 4.0 },
	};
	const char *root = getenv("PLAN_TEST_SOURCE_ROOT");
	struct framework nemo, bridge;
	struct plan_error err;
	char path[4096];

	ck_assert_msg(root != NULL, "PLAN_TEST_SOURCE_ROOT is not set (run through meson test)");
	setenv("PLAN_CLI_PATH", root, 1); /* where 'base: nemo' is found */
	profile_path_init(NULL);
	snprintf(path, sizeof(path), "%s/frameworks/nemo.yaml", root);
	ck_assert_msg(framework_load_file(&nemo, path, &err), "%s", err.message);
	snprintf(path, sizeof(path), "%s/frameworks/megatron-bridge.yaml", root);
	ck_assert_msg(framework_load_file(&bridge, path, &err), "%s", err.message);
	ck_assert_str_eq(bridge.name, "megatron-bridge");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		double n = *(const double *)((const char *)&nemo + keys[i].offset);
		double b = *(const double *)((const char *)&bridge + keys[i].offset);

		ck_assert_msg(fabs(n - keys[i].nemo) <= 1e-12 * fabs(keys[i].nemo), "nemo %s: %g", keys[i].key, n);
		ck_assert_msg(fabs(b - keys[i].bridge) <= 1e-12 * fabs(keys[i].bridge), "megatron-bridge %s: %g",
			      keys[i].key, b);
	}
	ck_assert_int_eq(bridge.cuda_graphs, nemo.cuda_graphs);
	ck_assert_int_eq(bridge.main_grad, nemo.main_grad);
	ck_assert_int_eq(bridge.moe_dispatcher, nemo.moe_dispatcher);
}
END_TEST

static Suite *
profile_suite(void)
{
	Suite *s = suite_create("profile");
	TCase *tc = tcase_create("profile");

	tcase_add_test(tc, test_model_defaults);
	tcase_add_loop_test(tc, test_model_errors, 0, sizeof(bad_models) / sizeof(bad_models[0]));
	tcase_add_test(tc, test_cluster_units);
	tcase_add_test(tc, test_cluster_defaults);
	tcase_add_test(tc, test_cluster_errors);
	tcase_add_test(tc, test_gemm_curve);
	tcase_add_test(tc, test_unknown_key_list);
	tcase_add_test(tc, test_megatron_bridge_profile);
	tcase_add_test(tc, test_framework_counts_whole);
	tcase_add_test(tc, test_framework_ring_exchange_bound);
	suite_add_tcase(s, tc);
	return s;
}

TEST_MAIN(profile_suite)
