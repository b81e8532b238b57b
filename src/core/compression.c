#include <math.h>
#include <stddef.h>

#include "plan/collective.h"
#include "plan/compression.h"
#include "plan/compute.h"
#include "plan/mixer.h"
#include "plan/pipeline.h"

const char *const compress_dp_scheme_names[] = { "auto", "allgather", "twoway", "allreduce", NULL };

/* Element-wise passes over a 16-bit tensor of @elements in GPU memory. */
static double
passes_time(const struct cluster *c, double passes, double elements)
{
	return compute_memory_time(c, passes * 2.0 * elements);
}

void
compression_tp_site(const struct compressor *cmp, const struct model *m,
		    const struct plan *p, const struct cluster *c,
		    const struct plan_layout *lay, struct compress_tp_site *out)
{
	const struct group_layout *g = &lay->tp;
	double rows = (double)p->micro_batch * p->seq_len, cols = m->hidden;
	double x = rows * cols, t = p->tp;
	double payload = compressor_payload_bytes(cmp, rows, cols, p->micro_batch, false);
	double uncompressed = 2.0 * x;
	double rest = 0.0;

	/* With sequence parallelism the hooked reduce is a reduce-scatter and
	 * the matching all-gather of the next block stays uncompressed. */
	if (p->sequence_parallel)
		rest = collective_time(c, g, COLL_ALLGATHER, COLL_ALGO_RING, uncompressed);
	out->params = 0.0;
	out->backward_s = 0.0;
	out->host_s = 0.0;
	out->encode_s = cmp->encode_latency_s + passes_time(c, cmp->encode_passes, x);
	out->decode_s = cmp->decode_latency_s;
	switch (cmp->method) {
	case COMPRESSOR_AUTOENCODER:
		/* all_reduce(Y_i W_e^T) W_d^T: the linear code is summed. */
		out->comm_s = collective_time(c, g, p->sequence_parallel ? COLL_REDUCESCATTER : COLL_ALLREDUCE,
					      COLL_ALGO_RING, payload);
		out->encode_s += compute_gemm_time(c, rows, cmp->dim, cols, 1);
		out->decode_s += compute_gemm_time(c, rows, cols, cmp->dim, 1);
		out->backward_s = 2.0 * (compute_gemm_time(c, rows, cmp->dim, cols, 1) +
					 compute_gemm_time(c, rows, cols, cmp->dim, 1));
		out->params = 2.0 * cols * cmp->dim;
		out->wire_bytes = (p->sequence_parallel ? 1.0 : 2.0) * (t - 1) / t * payload;
		break;
	case COMPRESSOR_POWERSGD: {
		/* Two all-reduces: P (b s x r) and Q (b h x r: one per sample,
		 * MCBench's Q = X^T P batched over the micro-batch), in wire_bytes. */
		double pb = rows * cmp->rank * cmp->wire_bytes;
		double qb = p->micro_batch * cols * cmp->rank * cmp->wire_bytes;

		out->comm_s = collective_time(c, g, COLL_ALLREDUCE, COLL_ALGO_RING, pb) +
			      collective_time(c, g, COLL_ALLREDUCE, COLL_ALGO_RING, qb);
		out->decode_s += passes_time(c, cmp->decode_passes, x);
		out->wire_bytes = 2.0 * (t - 1) / t * (pb + qb);
		break;
	}
	default:
		/* Top-K, Rand-K and quantised values cannot be summed: all-gather
		 * every rank's payload, then t decodes that are summed. */
		out->comm_s = collective_time(c, g, COLL_ALLGATHER, COLL_ALGO_RING, t * payload);
		out->decode_s += t * passes_time(c, cmp->decode_passes, x);
		out->wire_bytes = (t - 1) * payload;
		if (cmp->method == COMPRESSOR_RANDK) {
			out->host_s = cmp->host_index_s * compressor_kept(cmp, x);
			out->encode_s += out->host_s;
		}
		break;
	}
	out->comm_s += rest;
	if (p->sequence_parallel)
		out->wire_bytes += (t - 1) / t * uncompressed;
}

void
compression_pp_boundary(const struct compressor *cmp, const struct model *m,
			const struct plan *p, const struct cluster *c,
			const struct plan_layout *lay, struct compress_pp_boundary *out)
{
	double rows = (double)p->micro_batch * p->seq_len, cols = m->hidden;
	double x = rows * cols;
	double codec_fwd, codec_bwd, host = 0.0;

	if (p->sequence_parallel)
		rows /= p->tp;
	out->fwd_bytes = compressor_payload_bytes(cmp, rows, cols, p->micro_batch, true);
	out->bwd_bytes = compressor_pp_backward_bytes(cmp, rows, cols);
	if (lay->pp_inter_node && p->tp > 1 && !p->sequence_parallel) {
		/* Megatron's scatter/gather splits every stage-boundary tensor
		 * into t chunks, compressed codes too (MCBench's
		 * p2p_communication._communicate): 1/t per TP rank over the
		 * network, then an NVLink all-gather. */
		out->send_s = collective_p2p_time(c, true, out->fwd_bytes / p->tp) +
			      collective_time(c, &lay->tp, COLL_ALLGATHER, COLL_ALGO_RING, out->fwd_bytes) +
			      collective_p2p_time(c, true, out->bwd_bytes / p->tp) +
			      collective_time(c, &lay->tp, COLL_ALLGATHER, COLL_ALGO_RING, out->bwd_bytes);
		out->fwd_bytes /= p->tp;
		out->bwd_bytes /= p->tp;
	} else {
		out->send_s = collective_p2p_time(c, lay->pp_inter_node, out->fwd_bytes) +
			      collective_p2p_time(c, lay->pp_inter_node, out->bwd_bytes);
	}
	codec_fwd = cmp->encode_latency_s + cmp->decode_latency_s +
		    passes_time(c, cmp->encode_passes + cmp->decode_passes, x);
	if (cmp->method == COMPRESSOR_RANDK) {
		host = cmp->host_index_s * compressor_kept(cmp, x);
		codec_fwd += host;
	}
	/* The quantised path sends its gradient uncompressed (straight-through). */
	codec_bwd = cmp->method == COMPRESSOR_QUANTIZE ? 0.0 : codec_fwd;
	out->host_s = cmp->method == COMPRESSOR_QUANTIZE ? host : 2.0 * host;
	out->params = 0.0;
	if (cmp->method == COMPRESSOR_AUTOENCODER) {
		/* Encoder in the sender's last layer, decoder in the receiver's first
		 * (MCBench build_encoder_layer / build_decoder_layer). */
		double gemm = compute_gemm_time(c, rows, cmp->dim, cols, 1) +
			      compute_gemm_time(c, rows, cols, cmp->dim, 1);

		codec_fwd = cmp->encode_latency_s + cmp->decode_latency_s + gemm;
		codec_bwd = 2.0 * gemm;
		out->host_s = 0.0;
		out->params = cols * cmp->dim;
	}
	out->codec_s = codec_fwd + codec_bwd;
}

/*
 * One layer's weight matrices as PowerSGD compresses them (Vogels et al.
 * 2019): r (rows + cols) elements each, into @low, and what they cover,
 * into @cov; this TP rank's share. A transformer layer's QKV (with gated
 * attention's gate, model_qkv_dim), projection and MLP; a hybrid kind
 * model's layer its part's only: a Mamba or GDN mixer's in_proj and
 * out_proj (mixer.h), an attention layer's QKV and projection, an MLP
 * layer's fc1 (and gate) and fc2.
 */
static void
powersgd_layer(const struct model *m, double t, double r, double *low, double *cov)
{
	double h = m->hidden, ad = (double)m->heads * model_head_dim(m), f = m->ffn_hidden;
	double mats[7][2];
	int n = 0;

	if (mixer_present(m)) {
		mats[n][0] = h, mats[n++][1] = mixer_in_proj_dim(m) / t;
		mats[n][0] = mixer_out_proj_in_dim(m) / t, mats[n++][1] = h;
	}
	if (model_has_part(m, MODEL_PART_ATTENTION)) {
		mats[n][0] = h, mats[n++][1] = model_qkv_dim(m) / t; /* QKV (and the output gate) */
		mats[n][0] = ad / t, mats[n++][1] = h;
	}
	if (model_has_part(m, MODEL_PART_MLP)) {
		mats[n][0] = h, mats[n++][1] = f / t;
		mats[n][0] = f / t, mats[n++][1] = h;
		if (m->gated_mlp)
			mats[n][0] = h, mats[n++][1] = f / t;
	}
	*low = *cov = 0.0;
	for (int i = 0; i < n; i++) {
		*low += r * (mats[i][0] + mats[i][1]);
		*cov += mats[i][0] * mats[i][1];
	}
}

/* Elements of the compressed gradient of @layers layers' weight matrices
 * for PowerSGD; a hybrid model's mean layer over its pattern. */
static double
powersgd_elements(const struct compressor *cmp, const struct model *m, const struct plan *p,
		  double layers, double *covered)
{
	double out = 0.0, cov = 0.0;

	if (!model_is_hybrid(m)) {
		powersgd_layer(m, p->tp, cmp->rank, &out, &cov);
	} else {
		for (int k = 0; k < MODEL_KIND_COUNT; k++) {
			struct model km;
			double lo, co;

			model_kind_model(m, k, &km);
			powersgd_layer(&km, p->tp, cmp->rank, &lo, &co);
			out += (double)km.layers / m->layers * lo;
			cov += (double)km.layers / m->layers * co;
		}
	}
	*covered = layers * cov;
	return layers * out;
}

/* Bytes of PowerSGD's compressed gradient: the low-rank factors in
 * wire_bytes, and whatever they do not cover in 16 bits. */
static double
powersgd_dp_bytes(const struct compressor *cmp, const struct model *m, const struct plan *p,
		  double params, double layers)
{
	double covered, low = powersgd_elements(cmp, m, p, layers, &covered);

	return low * cmp->wire_bytes + 2.0 * fmax(0.0, params - covered);
}

/* One rank's compressed gradient of @params elements, gathered or pushed. */
static double
dp_payload_bytes(const struct compressor *cmp, const struct model *m, const struct plan *p,
		 double params, double layers)
{
	if (cmp->method == COMPRESSOR_QUANTIZE)
		return compressor_quantized_bytes(params, cmp->bits, cmp->scale_bytes);
	if (cmp->method == COMPRESSOR_POWERSGD)
		return powersgd_dp_bytes(cmp, m, p, params, layers);
	return compressor_payload_bytes(cmp, params, 1.0, 1.0, false);
}

/*
 * Two-way (BytePS-Compress): reduce inside the node over NVLink
 * uncompressed, then each GPU pushes its 1/per_node shard compressed to
 * the shard's owners on the other nodes, which decompress, sum and
 * compress the aggregate for the pull; an NVLink all-gather spreads the
 * result.
 */
static void
dp_twoway(const struct cluster *c, const struct group_layout *g, double grad_bytes, double payload,
	  struct compress_dp *out)
{
	struct group_layout intra = { g->per_node, g->per_node, 1 };
	struct group_layout inter = { g->nodes, 1, g->nodes };
	double k = g->nodes, shard = payload / g->per_node;

	out->comm_s = collective_time(c, &intra, COLL_REDUCESCATTER, COLL_ALGO_RING, grad_bytes) +
		      collective_time(c, &inter, COLL_REDUCESCATTER, COLL_ALGO_RING, shard) +
		      collective_time(c, &inter, COLL_ALLGATHER, COLL_ALGO_RING, shard) +
		      collective_time(c, &intra, COLL_ALLGATHER, COLL_ALGO_RING, grad_bytes);
	/* Bytes sent: the compressed shards across nodes, and the
	 * 16-bit reduce-scatter and all-gather over NVLink. */
	out->wire_bytes = (k > 1 ? 2.0 * (k - 1) / k * shard : 0.0) +
			  2.0 * (intra.size - 1) / intra.size * grad_bytes;
}

/*
 * BytePS compresses on the CPU, pipelined with the network in partitions
 * of BYTEPS_PARTITION_BYTES (4,096,000 bytes): only the part the network
 * cannot hide, plus one partition, is exposed. The node's CPU codes all
 * of its GPUs' shards (push and pull).
 */
static double
dp_cpu_codec(const struct compressor *cmp, const struct cluster *c, const struct group_layout *g,
	     double grad_bytes, double comm_s)
{
	double groups = (double)c->gpus_per_node / g->per_node; /* DP groups per node */
	double t_cpu = 2.0 * groups * grad_bytes / cmp->host_bw_Bps;
	double parts = fmax(1.0, ceil(grad_bytes / 4096000.0));

	return fmax(0.0, t_cpu - comm_s) + t_cpu / parts;
}

void
compression_dp(const struct compressor *cmp, const struct model *m,
	       const struct plan *p, const struct cluster *c,
	       const struct plan_layout *lay, double params, double layers,
	       int scheme, bool on_cpu, struct compress_dp *out)
{
	const struct group_layout *g = &lay->dp;
	double n = g->size;
	double grad_bytes = 2.0 * params;
	double codec;

	out->ef_bytes = compressor_ef_bytes(cmp, params);
	if (scheme == COMPRESS_DP_AUTO)
		scheme = cmp->method == COMPRESSOR_POWERSGD ? COMPRESS_DP_ALLREDUCE : COMPRESS_DP_TWOWAY;
	/* Encoding reads the gradient; decoding writes it back. */
	codec = cmp->encode_latency_s + cmp->decode_latency_s +
		passes_time(c, cmp->encode_passes + cmp->decode_passes, params);
	if (scheme == COMPRESS_DP_ALLREDUCE) {
		double bytes = powersgd_dp_bytes(cmp, m, p, params, layers);

		/* P and Q all-reduced: two collectives (Vogels et al. 2019, Alg. 1). */
		out->comm_s = 2.0 * collective_time(c, g, COLL_ALLREDUCE, COLL_ALGO_RING, bytes / 2.0);
		out->wire_bytes = n > 1 ? 2.0 * (n - 1) / n * bytes : 0.0;
	} else if (scheme == COMPRESS_DP_ALLGATHER) {
		double payload = dp_payload_bytes(cmp, m, p, params, layers);

		out->comm_s = collective_time(c, g, COLL_ALLGATHER, COLL_ALGO_RING, n * payload);
		out->wire_bytes = (n - 1) * payload;
		codec += (n - 1) * passes_time(c, cmp->decode_passes, params);
	} else {
		dp_twoway(c, g, grad_bytes, dp_payload_bytes(cmp, m, p, params, layers), out);
		codec *= 2.0 / g->per_node; /* each GPU codes its shard; owners code again */
	}
	out->scheme = scheme;
	out->codec_s = on_cpu ? dp_cpu_codec(cmp, c, g, grad_bytes, out->comm_s) : codec;
}

/* @arg: the last layer left uncompressed (1-based). */
static bool
above(int layer, const void *arg)
{
	return layer > *(const int *)arg;
}

int
compression_layers_on_stage(const struct model *m, const struct plan *p, int stage, int from)
{
	return pipeline_count_layers(m, p, stage, above, &from);
}

struct moe_above {
	const struct model *m;
	int from;
};

static bool
moe_above(int layer, const void *arg)
{
	const struct moe_above *a = arg;

	return layer > a->from && model_layer_is_moe(a->m, layer);
}

int
compression_moe_layers_on_stage(const struct model *m, const struct plan *p, int stage, int from)
{
	struct moe_above a = { .m = m, .from = from };

	return model_is_moe(m) ? pipeline_count_layers(m, p, stage, moe_above, &a) : 0;
}
