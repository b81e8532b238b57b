/*
 * A compressor profile: what MCBench (Bian et al., MLSys 2024) and
 * BytePS-Compress (Zhong et al. 2021) put on the wire in place of
 * activations and gradients, and what encoding and decoding cost.
 */
#pragma once

#include <stdbool.h>

#include "plan/error.h"

enum compressor_method {
	COMPRESSOR_AUTOENCODER, /**< learned linear encoder/decoder of code size dim */
	COMPRESSOR_TOPK,        /**< the k largest magnitudes, values + indices */
	COMPRESSOR_RANDK,       /**< k random indices (sampled on the CPU in MCBench) */
	COMPRESSOR_QUANTIZE,    /**< per-channel max-abs scaling to `bits` */
	COMPRESSOR_POWERSGD,    /**< rank-r power iteration: P and Q */
};

enum compressor_ef {
	COMPRESSOR_EF_NONE,
	COMPRESSOR_EF_FULL,        /**< EFSGD: a full-precision error buffer */
	COMPRESSOR_EF_CONTRACTIVE, /**< ConEF: the error buffer itself compressed */
};

extern const char *const compressor_method_names[];

struct compressor {
	char name[64];
	char description[256];
	int method;            /**< enum compressor_method */
	int dim;               /**< autoencoder code size d */
	double fraction;       /**< topk/randk: kept fraction (0 when k is given) */
	int k;                 /**< topk/randk: kept elements per tensor (0 when fraction) */
	int bits;              /**< quantize: 1, 2, 4 or 8 */
	int rank;              /**< powersgd: r */
	double value_bytes;    /**< bytes of a kept value (fp16: 2) */
	double index_bytes;    /**< bytes of an index (MCBench: int64, 8) */
	double scale_bytes;    /**< quantize: bytes of a per-channel scale */
	double wire_bytes;     /**< powersgd: bytes per element of P and Q (MCBench: fp64, 8) */
	double encode_latency_s;
	double decode_latency_s;
	double encode_passes;  /**< passes over the uncompressed 16-bit tensor in GPU memory */
	double decode_passes;  /**< passes per decoded tensor */
	double host_index_s;   /**< randk: CPU time per sampled index */
	double host_bw_Bps;    /**< CPU compression throughput (BytePS-style DP compression) */
	int error_feedback;    /**< enum compressor_ef */
	int error_feedback_bits; /**< contractive buffer bits */
};


/** Whether the method's output can be summed in an all-reduce (AE, PowerSGD). */
bool compressor_allreducible(const struct compressor *c);

/** Elements kept by topk/randk out of @elements. */
double compressor_kept(const struct compressor *c, double elements);

/**
 * Bytes one rank puts on the wire for a @rows x @cols 16-bit tensor,
 * forward direction (MCBench's payloads, formulas.md Sec. 1.3):
 * AE rows*dim*2; Top-K/Rand-K k*(value+index); quantize rows*cols*bits/8
 * + cols*scale; PowerSGD r*(rows + batch*cols)*wire (P is rows x r, and
 * each of the @batch samples has its own Q of cols x r), except at a
 * @pipeline boundary where MCBench casts P and Q to fp16 before sending.
 */
double compressor_payload_bytes(const struct compressor *c, double rows, double cols,
				double batch, bool pipeline);

/**
 * Bytes of @elements quantised to @bits each, with one scale of
 * @scale_bytes per group of 512 elements (DP gradients, ConEF's error
 * buffer). The group size is an assumption of this model: MCBench's
 * activation quantiser keeps one scale per channel instead (see
 * compressor_payload_bytes()), and ConEF does not give one.
 */
double compressor_quantized_bytes(double elements, double bits, double scale_bytes);

/**
 * Bytes of the backward gradient at a compressed pipeline boundary
 * (MCBench recv_backward shapes): AE rows*dim*2; Top-K/Rand-K k*value;
 * quantize the full 16-bit tensor (straight-through); PowerSGD rows*r*2.
 */
double compressor_pp_backward_bytes(const struct compressor *c, double rows, double cols);

/**
 * Error-feedback memory for a buffer of @elements: full keeps fp32
 * (4 bytes each, EFSGD); contractive keeps error_feedback_bits (ConEF).
 */
double compressor_ef_bytes(const struct compressor *c, double elements);
