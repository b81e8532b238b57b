#include <math.h>
#include <stddef.h>
#include <string.h>

#include "plan/compressor.h"

/*
 * Elements that share one 16-bit scale when a whole gradient or an
 * error-feedback buffer is quantised (compressor_quantized_bytes()).
 * This group size is this model's assumption, not a cited figure:
 * MCBench quantises activations with one scale per hidden channel
 * (formulas.md Sec. 1.1, compressor_payload_bytes()), and ConEF's
 * abstract (arXiv 2312.08538) only says the compressed buffer carries
 * metadata, without a group size.
 */
static const double compressor_scale_group = 512.0;

const char *const compressor_method_names[] = {
	"autoencoder", "topk", "randk", "quantize", "powersgd", NULL,
};

bool
compressor_allreducible(const struct compressor *c)
{
	/* A linear encoder commutes with the sum (MCBench keeps the all-reduce
	 * for AE); PowerSGD's P and Q are all-reduced (Vogels et al. 2019). */
	return c->method == COMPRESSOR_AUTOENCODER || c->method == COMPRESSOR_POWERSGD;
}

double
compressor_kept(const struct compressor *c, double elements)
{
	double k = c->k > 0 ? (double)c->k : ceil(c->fraction * elements);

	return k < elements ? k : elements; /* MCBench sends everything when X < k */
}

double
compressor_payload_bytes(const struct compressor *c, double rows, double cols, double batch,
			 bool pipeline)
{
	switch (c->method) {
	case COMPRESSOR_AUTOENCODER:
		return rows * c->dim * 2.0;
	case COMPRESSOR_TOPK:
	case COMPRESSOR_RANDK:
		return compressor_kept(c, rows * cols) * (c->value_bytes + c->index_bytes);
	case COMPRESSOR_QUANTIZE:
		return rows * cols * c->bits / 8.0 + cols * c->scale_bytes;
	case COMPRESSOR_POWERSGD:
		return c->rank * (rows + batch * cols) * (pipeline ? 2.0 : c->wire_bytes);
	}
	return 2.0 * rows * cols;
}

double
compressor_quantized_bytes(double elements, double bits, double scale_bytes)
{
	return elements * bits / 8.0 + scale_bytes * elements / compressor_scale_group;
}

double
compressor_pp_backward_bytes(const struct compressor *c, double rows, double cols)
{
	switch (c->method) {
	case COMPRESSOR_AUTOENCODER:
		return rows * c->dim * 2.0;
	case COMPRESSOR_TOPK:
	case COMPRESSOR_RANDK:
		return compressor_kept(c, rows * cols) * c->value_bytes;
	case COMPRESSOR_POWERSGD:
		return rows * c->rank * 2.0;
	case COMPRESSOR_QUANTIZE:
		break;
	}
	return 2.0 * rows * cols;
}

double
compressor_ef_bytes(const struct compressor *c, double elements)
{
	switch (c->error_feedback) {
	case COMPRESSOR_EF_FULL:
		return 4.0 * elements;
	case COMPRESSOR_EF_CONTRACTIVE:
		/* ConEF (arXiv 2312.08538): the buffer is compressed by a
		 * contractive quantizer, with fp16 scales. */
		return compressor_quantized_bytes(elements, c->error_feedback_bits, 2.0);
	default:
		return 0.0;
	}
}
