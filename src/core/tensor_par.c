#include <math.h>

#include "plan/collective.h"
#include "plan/tensor_par.h"

/*
 * How much slower a GEMM runs while a TP collective shares its SMs:
 * Megatron-Core's user-buffer overlap drives the all-gather ring with 1
 * SM and the reduce-scatter with 16 of the H100's 132, and
 * docs/research/framework-data.md (Sec. 8) puts NVLink collectives with
 * user buffers at 1.05-1.10.
 */
#define TP_OVERLAP_SLOWDOWN 1.10

/*
 * A sequence-parallel collective of @comm seconds overlapped with the
 * GEMM of @gemm seconds it feeds or follows (Megatron-Core's
 * --tp-comm-overlap, torchtitan's async TP; Wang et al. ASPLOS 2023,
 * "Overlap communication with dependent computation via decomposition"):
 * split into t chunks, each hidden behind the GEMM on the previous one
 * (an all-gather before its GEMM) or the next (a reduce-scatter after
 * it): the same two-stage pipeline of chunks c = comm/t and g = gemm/t.
 * A GEMM chunk that runs beside a collective chunk loses the slowdown
 * on the time they share, g + (s - 1) min(c, g), and the pipeline takes
 * c + (t - 1) max(c, g + (s - 1) min(c, g)) + g. Beyond the GEMM: comm/t
 * and the slowdowns when the GEMM is the longer; what the collective
 * exceeds it by and a GEMM chunk, the slowdowns hidden, when the
 * collective is.
 */
double
tp_overlapped_time(double comm, double gemm, int t)
{
	double n = t > 1 ? t : 1, c = comm / n, g = gemm / n;
	double slowed = g + (TP_OVERLAP_SLOWDOWN - 1.0) * fmin(c, g);

	return c + g + (n - 1.0) * fmax(c, slowed) - gemm;
}

void
tp_layer_comm(const struct model *m, const struct plan *p,
	      const struct cluster *c, const struct plan_layout *lay,
	      const struct compute_layer *cl, struct tp_layer_comm *out)
{
	double bytes = 2.0 * p->micro_batch * (double)p->seq_len * m->hidden;
	double one;

	if (p->sequence_parallel)
		one = collective_time(c, &lay->tp, COLL_ALLGATHER, COLL_ALGO_RING, bytes) +
		      collective_time(c, &lay->tp, COLL_REDUCESCATTER, COLL_ALGO_RING, bytes);
	else
		one = collective_time(c, &lay->tp, COLL_ALLREDUCE, COLL_ALGO_RING, bytes);
	/* With SP, one "collective" is an AG+RS pair and a layer has two such
	 * pairs per pass; without, two all-reduces per pass. */
	out->bytes = bytes;
	out->collective_s = one;
	out->fwd_s = 2.0 * one;
	out->bwd_s = 2.0 * one;
	if (p->tp_overlap && p->sequence_parallel && p->tp > 1) {
		/* Forward: gather before QKV and fc1, reduce-scatter after the
		 * projection and fc2. Backward, mirrored: the output gradients'
		 * gathers with the dgrad GEMMs of the projection and fc2, the
		 * input gradients' reduce-scatters with QKV's and fc1's (a
		 * dgrad GEMM takes as long as its forward). */
		double ag = collective_time(c, &lay->tp, COLL_ALLGATHER, COLL_ALGO_RING, bytes);
		double rs = collective_time(c, &lay->tp, COLL_REDUCESCATTER, COLL_ALGO_RING, bytes);

		out->fwd_s = tp_overlapped_time(ag, cl->qkv_fwd_s, p->tp) + tp_overlapped_time(rs, cl->proj_fwd_s, p->tp) +
			     tp_overlapped_time(ag, cl->fc1_fwd_s, p->tp) + tp_overlapped_time(rs, cl->fc2_fwd_s, p->tp);
		out->bwd_s = tp_overlapped_time(ag, cl->proj_fwd_s, p->tp) + tp_overlapped_time(rs, cl->qkv_fwd_s, p->tp) +
			     tp_overlapped_time(ag, cl->fc2_fwd_s, p->tp) + tp_overlapped_time(rs, cl->fc1_fwd_s, p->tp);
	}
	/* Full recomputation re-runs the forward, collectives included
	 * (Narayanan et al. SC21, Sec. 3.5). */
	out->recompute_s = p->recompute == PLAN_RECOMPUTE_FULL ? out->fwd_s : 0.0;
}
