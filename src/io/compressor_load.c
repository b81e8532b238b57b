#include <math.h>
#include <stddef.h>
#include <string.h>

#include "plan/compressor.h"
#include "io/profile_load.h"

static const char *const ef_names[] = { "none", "full", "contractive", NULL };

#define OFF(f) offsetof(struct compressor, f)
#define UNSET (-1.0)

const struct schema_key compressor_schema[] = {
	{ .key = "name", .type = SCHEMA_STRING, .required = true, .offset = OFF(name), .size = 64,
	  .help = "profile name" },
	{ .key = "description", .type = SCHEMA_STRING, .offset = OFF(description), .size = 256,
	  .help = "free text" },
	{ .key = "method", .type = SCHEMA_ENUM, .required = true, .offset = OFF(method),
	  .choices = compressor_method_names, .help = "compression method" },
	{ .key = "dim", .type = SCHEMA_INT, .offset = OFF(dim), .min = 1, .max = 1e9,
	  .help = "autoencoder: code size d (required for autoencoder)" },
	{ .key = "fraction", .type = SCHEMA_NUMBER, .offset = OFF(fraction), .min = 0,
	  .min_exclusive = true, .max = 1, .help = "topk/randk: fraction of elements kept (or give k)" },
	{ .key = "k", .type = SCHEMA_INT, .offset = OFF(k), .min = 1, .max = 2e9,
	  .help = "topk/randk: elements kept per tensor (or give fraction)" },
	{ .key = "bits", .type = SCHEMA_INT, .offset = OFF(bits), .min = 1, .max = 8,
	  .help = "quantize: bits per value, 1, 2, 4 or 8" },
	{ .key = "rank", .type = SCHEMA_INT, .offset = OFF(rank), .min = 1, .max = 1e6,
	  .help = "powersgd: rank r" },
	{ .key = "value_bytes", .type = SCHEMA_NUMBER, .offset = OFF(value_bytes), .min = 0,
	  .min_exclusive = true, .max = 16, .def = "2", .help = "bytes of a kept value (fp16)" },
	{ .key = "index_bytes", .type = SCHEMA_NUMBER, .offset = OFF(index_bytes), .min = 0, .max = 16,
	  .def = "8", .help = "bytes of an index (MCBench sends int64)" },
	{ .key = "scale_bytes", .type = SCHEMA_NUMBER, .offset = OFF(scale_bytes), .min = 0, .max = 16,
	  .def = "2", .help = "quantize: bytes of each per-channel scale (fp16)" },
	{ .key = "wire_bytes", .type = SCHEMA_NUMBER, .offset = OFF(wire_bytes), .min = 0,
	  .min_exclusive = true, .max = 16, .def = "8",
	  .help = "powersgd: bytes per element of P and Q (MCBench computes and sends float64)" },
	/* Defaults 10 us: a few kernels, each 2-5 us on the GPU and 5-20 us to
	 * launch from the host (gpu-data.md, "Cross-GPU: kernel launch
	 * overhead": torchao's 2 us floor on H100, SuperBench kernel-launch
	 * 5.5-10 us, Holistic Trace Analysis' 5-20 us): framework-data.md
	 * Sec. 27. */
	{ .key = "encode_latency", .type = SCHEMA_QUANTITY, .unit = UNIT_TIME, .offset = OFF(encode_latency_s),
	  .min = 0, .max = 10, .def = "10 us", .help = "fixed cost of one encode (kernel launches)" },
	{ .key = "decode_latency", .type = SCHEMA_QUANTITY, .unit = UNIT_TIME, .offset = OFF(decode_latency_s),
	  .min = 0, .max = 10, .def = "10 us", .help = "fixed cost of one decode" },
	{ .key = "encode_passes", .type = SCHEMA_NUMBER, .offset = OFF(encode_passes), .min = 0, .max = 1000,
	  .help = "passes over the uncompressed tensor in GPU memory to encode; default by method "
		  "(autoencoder 0: GEMMs; topk 8; randk 2; quantize 4; powersgd 8)" },
	{ .key = "decode_passes", .type = SCHEMA_NUMBER, .offset = OFF(decode_passes), .min = 0, .max = 1000,
	  .help = "passes per decoded tensor; default by method (autoencoder 0; topk 2; randk 2; "
		  "quantize 3; powersgd 4)" },
	{ .key = "host_index_time", .type = SCHEMA_QUANTITY, .unit = UNIT_TIME, .offset = OFF(host_index_s),
	  .min = 0, .max = 1, .help = "randk: CPU time per sampled index (Python random.sample); "
		  "default 0.25 us for randk, 0 otherwise" },
	{ .key = "host_throughput", .type = SCHEMA_QUANTITY, .unit = UNIT_BANDWIDTH, .offset = OFF(host_bw_Bps),
	  .min = UNITS_MIN_BANDWIDTH_BPS, .max = 1e15, .def = "8 GB/s",
	  .help = "CPU compression throughput of one node, bytes of gradient per second "
		  "(BytePS-style DP compression on several cores)" },
	{ .key = "error_feedback", .type = SCHEMA_ENUM, .offset = OFF(error_feedback), .def = "none",
	  .choices = ef_names, .help = "error-feedback memory: none, full (EFSGD) or contractive (ConEF)" },
	{ .key = "error_feedback_bits", .type = SCHEMA_INT, .offset = OFF(error_feedback_bits),
	  .min = 1, .max = 32, .def = "4", .help = "contractive: bits per element of the error buffer" },
	{ 0 },
};

/* Defaults read from MCBench's code (formulas.md Sec. 1.1): torch.topk is a
 * multi-pass radix select; randk gathers k values; quantize takes amax,
 * scales, rounds and packs; PowerSGD runs its GEMMs in float64. */
static const double default_encode_passes[] = { 0, 8, 2, 4, 8 };
static const double default_decode_passes[] = { 0, 2, 2, 3, 4 };

static bool
compressor_finish(struct compressor *c, struct ytree *t, struct plan_error *err)
{
	yaml_node_t *root = ytree_find_path(t, "method");
	const char *method = compressor_method_names[c->method];

	switch (c->method) {
	case COMPRESSOR_AUTOENCODER:
		if (c->dim == 0)
			return ytree_error(t, root, err, "method '%s' needs 'dim'", method);
		break;
	case COMPRESSOR_TOPK:
	case COMPRESSOR_RANDK:
		if ((c->fraction > 0) == (c->k > 0))
			return ytree_error(t, root, err, "method '%s' needs exactly one of 'fraction' and 'k'", method);
		break;
	case COMPRESSOR_QUANTIZE:
		if (c->bits == 0)
			return ytree_error(t, root, err, "method '%s' needs 'bits'", method);
		if (8 % c->bits != 0)
			return ytree_error(t, ytree_find_path(t, "bits"), err, "'bits' must be 1, 2, 4 or 8 (values are packed into bytes), got %d",
					   c->bits);
		break;
	case COMPRESSOR_POWERSGD:
		if (c->rank == 0)
			return ytree_error(t, root, err, "method '%s' needs 'rank'", method);
		break;
	}
	if (c->encode_passes == UNSET)
		c->encode_passes = default_encode_passes[c->method];
	if (c->decode_passes == UNSET)
		c->decode_passes = default_decode_passes[c->method];
	if (c->host_index_s == UNSET)
		c->host_index_s = c->method == COMPRESSOR_RANDK ? 0.25e-6 : 0.0;
	return true;
}

/* Keys whose default depends on the method start "not given". */
static void
init_cb(void *obj)
{
	struct compressor *c = obj;

	c->encode_passes = c->decode_passes = c->host_index_s = UNSET;
}

static bool
finish_cb(void *obj, struct ytree *t, struct plan_error *err)
{
	return compressor_finish(obj, t, err);
}

static const struct schema_profile compressor_profile = {
	compressor_schema, sizeof(struct compressor), init_cb, finish_cb,
};

bool
compressor_load_file(struct compressor *x, const char *path, struct plan_error *err)
{
	return schema_load(&compressor_profile, path, NULL, x, err);
}

bool
compressor_load_string(struct compressor *x, const char *name, const char *text, struct plan_error *err)
{
	return schema_load(&compressor_profile, name, text, x, err);
}
