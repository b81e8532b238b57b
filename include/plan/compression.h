/*
 * The cost of compressing what crosses the network: MCBench's activation
 * compression in TP and PP (Bian et al., MLSys 2024) and gradient
 * compression in DP (all-reducible low-rank, or two-way as in
 * BytePS-Compress, Zhong et al. 2021), with ConEF's error-feedback memory.
 */
#pragma once

#include <stdbool.h>

#include "plan/cluster.h"
#include "plan/compressor.h"
#include "plan/model.h"
#include "plan/plan.h"
#include "plan/topology.h"

/** One compressed TP site (one of the two forward collectives of a layer). */
struct compress_tp_site {
	double comm_s;        /**< the compressed collective(s) */
	double encode_s;      /**< encode before the collective */
	double decode_s;      /**< decode (t of them after an all-gather) */
	double backward_s;    /**< AE: backward of the encoder/decoder GEMMs */
	double host_s;        /**< of encode_s: the host's share (Rand-K's index sampling on the CPU) */
	double wire_bytes;    /**< bytes one rank sends */
	double params;        /**< AE: trainable parameters added (2 h d) */
};

/** Cost of one compressed TP site for micro-batch size and TP degree of @p. */
void compression_tp_site(const struct compressor *cmp, const struct model *m,
			 const struct plan *p, const struct cluster *c,
			 const struct plan_layout *lay, struct compress_tp_site *out);

/** One compressed pipeline boundary, per micro-batch, per direction pair. */
struct compress_pp_boundary {
	double fwd_bytes;     /**< activation payload per rank */
	double bwd_bytes;     /**< gradient payload per rank */
	double send_s;        /**< forward + backward sends */
	double codec_s;       /**< encode + decode of both directions */
	double host_s;        /**< of codec_s: the host's share (Rand-K's index sampling on the CPU) */
	double params;        /**< AE: encoder or decoder parameters (h d) per side */
};

void compression_pp_boundary(const struct compressor *cmp, const struct model *m,
			     const struct plan *p, const struct cluster *c,
			     const struct plan_layout *lay, struct compress_pp_boundary *out);

/** Schemes for compressed DP gradients. */
enum compress_dp_scheme {
	COMPRESS_DP_AUTO,      /**< all-reduce when the method allows it, else two-way */
	COMPRESS_DP_ALLGATHER, /**< all-gather every rank's compressed gradient */
	COMPRESS_DP_TWOWAY,    /**< compressed reduce-scatter + compressed all-gather (push/pull) */
	COMPRESS_DP_ALLREDUCE, /**< all-reduce of the compressed form (PowerSGD's P and Q) */
};
extern const char *const compress_dp_scheme_names[];

/** Compressed DP gradient synchronisation of one iteration on one GPU. */
struct compress_dp {
	double comm_s;        /**< network time */
	double codec_s;       /**< encode/decode on the critical path (GPU, or CPU not hidden) */
	double wire_bytes;    /**< bytes one rank sends */
	double ef_bytes;      /**< error-feedback memory */
	int scheme;           /**< the scheme used (never AUTO) */
};

/**
 * @params: gradient elements of this GPU; @matrix_rows/@matrix_cols: the
 * per-layer weight matrices for PowerSGD (4 or 5 per layer, @layers of
 * them); @on_cpu: compress on the host and pipeline with the network
 * (BytePS-Compress), else on the GPU.
 */
void compression_dp(const struct compressor *cmp, const struct model *m,
		    const struct plan *p, const struct cluster *c,
		    const struct plan_layout *lay, double params, double layers,
		    int scheme, bool on_cpu, struct compress_dp *out);

/** Number of layers of pipeline stage @stage (0-based) with index above @from (1-based, MCBench). */
int compression_layers_on_stage(const struct model *m, const struct plan *p, int stage, int from);

/** Of those, the MoE layers (model_layer_is_moe); 0 for a dense model. */
int compression_moe_layers_on_stage(const struct model *m, const struct plan *p, int stage, int from);
