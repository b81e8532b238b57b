/*
 * estimate_plan on a fuzzed model and cluster: the input is a model
 * profile, a NUL, a cluster profile, a NUL, and bytes that choose the plan
 * (plan_from_bytes; missing bytes read 0: the defaults, data parallelism
 * over the whole cluster, the cluster's bandwidths). Every number of a prediction that succeeds must
 * be finite: the target aborts on the first that is not, naming its field.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/fields.h"
#include "io/format.h"
#include "io/profile_load.h"
#include "io/profile_path.h"
#include "plan/compression.h"
#include "plan/estimate.h"
#include "fuzz.h"

#define FUZZ_MAX_PROFILES 64

/* The bundled compressors and frameworks, loaded once: a byte picks one. */
static struct compressor compressors[FUZZ_MAX_PROFILES];
static struct framework frameworks[FUZZ_MAX_PROFILES];
static int ncompressors, nframeworks;

static struct model model;
static struct cluster cluster;

/* profile_list's callback: @data is &ncompressors or &nframeworks. */
static void
add_profile(const char *name, const char *path, void *data)
{
	struct plan_error err;
	int *n = data;

	(void)name;
	if (*n >= FUZZ_MAX_PROFILES)
		return;
	if (n == &ncompressors ? compressor_load_file(&compressors[*n], path, &err)
			       : framework_load_file(&frameworks[*n], path, &err))
		(*n)++;
}

void
fuzz_target_init(void)
{
	profile_list(PROFILE_COMPRESSOR, add_profile, &ncompressors);
	profile_list(PROFILE_FRAMEWORK, add_profile, &nframeworks);
}

/* Byte @i of the plan bytes; 0 past their end. */
static unsigned
byte_at(const unsigned char *b, size_t n, size_t i)
{
	return i < n ? b[i] : 0;
}

/* The plan and options that bytes @b choose, each option from one byte in
 * a range around the values plans use; plan_validate sorts out the rest. */
static void
plan_from_bytes(struct plan *p, struct estimate_options *opt, const unsigned char *b, size_t n)
{
	unsigned flags = byte_at(b, n, 7);
	long rest;

	plan_init(p);
	p->tp = 1 << (byte_at(b, n, 0) % 5);
	p->pp = 1 + (int)(byte_at(b, n, 1) % 16);
	p->dp = (int)(byte_at(b, n, 2) % 65);
	p->vpp = 1 + (int)(byte_at(b, n, 3) % 4);
	p->micro_batch = 1 + (int)(byte_at(b, n, 4) % 16);
	p->seq_len = byte_at(b, n, 5) ? 256 * (int)byte_at(b, n, 5) : model.seq_len;
	p->recompute = (int)(byte_at(b, n, 6) % 3);
	/* Each bit flips one switch from plan_init's default. */
	p->sequence_parallel ^= (flags & 1) != 0;
	p->flash_attention ^= (flags & 2) != 0;
	p->dp_overlap ^= (flags & 4) != 0;
	p->compress.tp ^= (flags & 8) != 0;
	p->compress.pp ^= (flags & 16) != 0;
	p->compress.dp ^= (flags & 32) != 0;
	p->mics_hierarchical ^= (flags & 64) != 0;
	p->compress.dp_on_cpu ^= (flags & 128) != 0;
	p->zero = (int)(byte_at(b, n, 8) % 4);
	p->ep = 1 << (byte_at(b, n, 9) % 4);
	p->moe_routing = (int)(byte_at(b, n, 10) % 2);
	p->moe_overlap = (int)(byte_at(b, n, 11) % 2);
	p->mics_group = (int)(byte_at(b, n, 12) % 9);
	p->compress.dp_scheme = (int)(byte_at(b, n, 13) % 4);
	p->compress.from_layer = (int)byte_at(b, n, 14) - 1;
	p->compress.from_stage = (int)(byte_at(b, n, 15) % 4);
	/* dp 0: the rest of the cluster, as predict without --dp. */
	rest = cluster_gpus(&cluster) / ((long)p->tp * p->pp);
	if (p->dp == 0)
		p->dp = rest > 0 && rest <= 1 << 20 ? (int)rest : 1;
	p->global_batch = p->dp * p->micro_batch * (1 + (int)(byte_at(b, n, 16) % 32));
	opt->dp_algo = byte_at(b, n, 17) % 2 ? COLL_ALGO_HIERARCHICAL : COLL_ALGO_RING;
	opt->compressor = NULL;
	opt->framework = NULL;
	if (ncompressors && byte_at(b, n, 18) % (ncompressors + 1))
		opt->compressor = &compressors[byte_at(b, n, 18) % (ncompressors + 1) - 1];
	if (nframeworks && byte_at(b, n, 19) % (nframeworks + 1))
		opt->framework = &frameworks[byte_at(b, n, 19) % (nframeworks + 1) - 1];
	/* predict's --nic-bandwidth and --intra-bandwidth take any positive
	 * rate: here 1e-303.6 to 1e306 B/s, by a factor of 10^2.4. */
	if (byte_at(b, n, 20))
		cluster.inter.nic_bandwidth_Bps = pow(10.0, 2.4 * byte_at(b, n, 20) - 306.0);
	if (byte_at(b, n, 21))
		cluster.intra.bandwidth_Bps = pow(10.0, 2.4 * byte_at(b, n, 21) - 306.0);
}

/* Abort when a number of @r is not finite (issue 15: never), naming each. */
static void
check_finite(const struct report *r)
{
	bool bad = false;

	for (size_t i = 0; i < field_count; i++) {
		const struct field *f = &field_table[i];
		int n = field_length(f, r);

		for (int j = 0; j < (n < 0 ? 1 : n); j++) {
			struct field_value v;

			field_get(f, r, j, &v);
			if (v.type == FIELD_NUM && !isfinite(v.d)) {
				fprintf(stderr, "fuzz-estimate: %s[%d] = %g is not finite\n",
					f->key ? f->key : f->csv, j, v.d);
				bad = true;
			}
		}
	}
	if (bad)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	char *parts[3];
	size_t rest;
	struct plan plan;
	struct estimate_options opt;
	struct estimate est;
	struct plan_error err;

	memset(&cluster, 0, sizeof(cluster));
	plan_error_clear(&err);
	if (fuzz_split(text, size, parts, 3, &rest) == 3 &&
	    model_load_string(&model, "model.yaml", parts[0], &err) &&
	    cluster_load_string(&cluster, "cluster.yaml", parts[1], &err)) {
		plan_from_bytes(&plan, &opt, (const unsigned char *)parts[2], rest);
		if (estimate_plan(&model, &cluster, &plan, &opt, &est, &err)) {
			struct report rep = { &model, &cluster, &plan, &est, &opt, opt.compressor, NULL };

			check_finite(&rep);
		}
	}
	cluster_release(&cluster);
	free(text);
	return 0;
}
