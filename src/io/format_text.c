#include "plan/attn_shape.h"
#include "plan/compute.h"
#include "plan/data_par.h"
#include "plan/expert_par.h"
#include "plan/compression.h"
#include "plan/compressor.h"
#include "plan/fp8_recipe.h"
#include "plan/pipeline.h"
#include "plan/seqlen.h"
#include "io/fields.h"
#include "io/format.h"
#include "plan/units.h"

static void
row_time(FILE *out, const char *name, double s, double total)
{
	fprintf(out, "  %-12s %12.4f  %6.1f %%\n", name, s, total > 0 ? 100.0 * s / total : 0.0);
}

static void
row_mem(FILE *out, const char *name, double bytes)
{
	fprintf(out, "  %-12s %12.2f\n", name, bytes / 1073741824.0);
}

/* The rows of the breakdown and of the memory table: fields of
 * field_table, labelled with their JSON names; some only where they apply. */
enum text_when {
	TEXT_ALWAYS,
	TEXT_IF_MOE,        /* a MoE model, or EP time */
	TEXT_IF_COMPRESSED, /* a compressor applied */
	TEXT_IF_CP,         /* context-parallel exchanges showed */
	TEXT_IF_LAUNCH,     /* the GPU waited for the host's launches */
	TEXT_IF_OFFLOAD,    /* activation offloading's copies showed */
	TEXT_IF_USERBUFFERS, /* plan-cli ubuf: TE's TP-overlap buffers held memory */
};

struct text_row {
	const char *key;
	enum text_when when;
};

/* The breakdown's rows, from the list of its terms: each at its text_row,
 * shown as its text_when says. */
#define TEXT_BREAKDOWN_ROW(member, text_row, text_when, help) \
	[text_row] = { "breakdown_s." #member, TEXT_##text_when },
#define TEXT_ROW_BIT(member, text_row, text_when, help) | 1ull << (text_row)
static const struct text_row breakdown_rows[ESTIMATE_BREAKDOWN_COUNT + 1] = {
	ESTIMATE_BREAKDOWN_TERMS(TEXT_BREAKDOWN_ROW)
};
/* With as many rows as terms, every place taken means no two terms share
 * one and none is left empty (an empty one would end the rows early). */
_Static_assert((0 ESTIMATE_BREAKDOWN_TERMS(TEXT_ROW_BIT)) == (1ull << ESTIMATE_BREAKDOWN_COUNT) - 1,
	       "the text_row of the breakdown's terms are 0 to ESTIMATE_BREAKDOWN_COUNT - 1, each once");

static const struct text_row memory_rows[] = {
	{ "memory_bytes.weights", TEXT_ALWAYS },
	{ "memory_bytes.gradients", TEXT_ALWAYS },
	{ "memory_bytes.optimizer", TEXT_ALWAYS },
	{ "memory_bytes.activations", TEXT_ALWAYS },
	{ "memory_bytes.other", TEXT_ALWAYS },
	{ "memory_bytes.compression", TEXT_IF_COMPRESSED },
	{ "memory_bytes.userbuffers", TEXT_IF_USERBUFFERS },
	{ NULL, TEXT_ALWAYS },
};

static bool
text_applies(enum text_when when, const struct estimate *e)
{
	switch (when) {
	case TEXT_IF_MOE: return e->details.moe_layers > 0 || e->breakdown.ep_comm > 0;
	case TEXT_IF_COMPRESSED: return e->compressed;
	case TEXT_IF_CP: return e->breakdown.cp_comm > 0;
	case TEXT_IF_LAUNCH: return e->breakdown.launch > 0;
	case TEXT_IF_OFFLOAD: return e->breakdown.offload > 0;
	case TEXT_IF_USERBUFFERS: return e->memory.userbuffers > 0;
	default: return true;
	}
}

/* Time rows (a share of @total) or, with @total < 0, memory rows in GiB.
 * False when a key is not in field_table. */
static bool
text_rows(FILE *out, const struct report *r, const struct text_row *list, double total)
{
	for (; list->key; list++) {
		const struct field *f = field_find(list->key);
		struct field_value v;

		if (!f)
			return false;
		if (!text_applies(list->when, r->est))
			continue;
		field_get(f, r, 0, &v);
		if (total < 0)
			row_mem(out, field_leaf(f), v.d);
		else
			row_time(out, field_leaf(f), v.d, total);
	}
	return true;
}

static void
bytes_row(FILE *out, const char *name, double before, double after)
{
	if (before <= 0 && after <= 0)
		return;
	fprintf(out, "  %-3s bytes per GPU per iteration %12.4g -> %-12.4g (%+.1f %%)\n", name, before,
		after, before > 0 ? 100.0 * (after - before) / before : 0.0);
}

/* Why compression changed the time: which traffic, how many bytes, what it cost. */
static void
format_text_compression(FILE *out, const struct report *r)
{
	const struct estimate *e = r->est;
	const struct plan_compression *pc = &r->plan->compress;

	fprintf(out, "compression  %s (%s) on%s%s%s", r->compressor->name,
		compressor_method_names[r->compressor->method], pc->tp ? " tp" : "",
		pc->pp ? " pp" : "", pc->dp ? " dp" : "");
	if (pc->tp)
		fprintf(out, ", TP layers above %d (%d on stage %d)",
			plan_compress_from_layer(r->plan, r->model),
			e->details.compressed_layers, e->details.bottleneck_stage);
	fprintf(out, "\n  uncompressed %.4f s, compressed %.4f s: speedup %.3fx\n",
		e->uncompressed_iteration_time_s, e->iteration_time_s, e->compression_speedup);
	fprintf(out, "  encode + decode on the critical path %.4f s\n", e->breakdown.compression);
	bytes_row(out, "tp", e->uncompressed_bytes.tp, e->bytes.tp);
	bytes_row(out, "pp", e->uncompressed_bytes.pp, e->bytes.pp);
	bytes_row(out, "dp", e->uncompressed_bytes.dp, e->bytes.dp);
	if (pc->dp)
		fprintf(out, "  dp gradients: %s, compressed on the %s\n",
			compress_dp_scheme_names[e->details.dp_compress_scheme], pc->dp_on_cpu ? "CPU" : "GPU");
	if (e->details.compression_params > 0)
		fprintf(out, "  autoencoder parameters added on this GPU: %.0f\n", e->details.compression_params);
	fputc('\n', out);
}

/* Checkpoints and failures (predict --checkpoint-to): a section of its own
 * at the end, so that a report without them is as it was. */
static void
format_text_checkpoint(FILE *out, const struct report *r)
{
	const struct checkpoint_estimate *k = r->ckpt;
	double gib = 1073741824.0;

	fputc('\n', out);
	if (k->target == CHECKPOINT_CPU)
		fprintf(out, "checkpoints  to CPU memory (Gemini) every %d iteration%s, %d cop%s (local + %d peer%s), "
			"%d machine%s\n", k->every, k->every == 1 ? "" : "s", k->replicas, k->replicas == 1 ? "y" : "ies",
			k->replicas - 1, k->replicas == 2 ? "" : "s", k->machines, k->machines == 1 ? "" : "s");
	else
		fprintf(out, "checkpoints  to storage every %d iteration%s (Young-Daly optimum %.1f s), %d machine%s\n",
			k->every, k->every == 1 ? "" : "s", k->optimal_interval_s, k->machines,
			k->machines == 1 ? "" : "s");
	fprintf(out, "  size            %.2f GiB per machine (%.2f per GPU), %.2f GiB in all\n",
		k->bytes_per_machine / gib, k->bytes_per_gpu / gib, k->bytes_total / gib);
	if (k->target == CHECKPOINT_CPU)
		fprintf(out, "  transfer        %.4f s GPU to CPU, %.4f s to peers; network idle %.4f s per iteration\n",
			k->gpu_to_cpu_s, k->to_peers_s, k->network_idle_s);
	else
		fprintf(out, "  transfer        %.4f s to storage, training stalled\n", k->to_storage_s);
	fprintf(out, "  checkpoint      %.4f s to complete; overhead %.4f s per iteration (%.2f %%)\n",
		k->checkpoint_s, k->overhead_per_iteration_s, 100.0 * k->overhead_fraction);
	fprintf(out, "  recovery        %.2f s from CPU memory, %.2f s from storage, restart %.0f s\n",
		k->recovery_cpu_s, k->recovery_storage_s, k->restart_s);
	if (k->target == CHECKPOINT_CPU)
		fprintf(out, "  copy survives   %.4f of one-machine failures, %.4f of two-machine ones\n",
			k->cpu_recovery_probability, k->cpu_recovery_probability_two);
	fprintf(out, "  failures        %.3g per day: %.1f s wasted each, %.2f %% of time wasted in all\n",
		k->failures_per_day, k->wasted_per_failure_s, 100.0 * k->wasted_fraction);
	fprintf(out, "  goodput         %.0f tokens/s of %.0f\n", k->goodput_tokens_per_s, r->est->tokens_per_s);
}

/* predict --seq-lengths: the data, how it is batched, its throughput. */
static void
format_text_batching(FILE *out, const struct estimate_batching *b)
{
	fprintf(out, "data            %.0f sequences, mean %.1f tokens, longest %d", b->sequences, b->mean_length,
		b->max_length);
	if (b->truncated_fraction > 0)
		fprintf(out, " (%.2f %% truncated to --seq-len)", 100.0 * b->truncated_fraction);
	fprintf(out, "\nbatching        %s", seqlen_batching_names[b->mode]);
	if (b->mode == SEQLEN_PACK)
		fprintf(out, " (%s attention): %.1f micro-batches of %.1f documents in rows of %.0f tokens\n",
			seqlen_pack_attention_names[b->pack_attention], b->microbatches,
			b->sequences_per_microbatch, b->padded_length);
	else
		fprintf(out, ": %.1f micro-batches of %.1f sequences, padded to %.1f tokens on average\n",
			b->microbatches, b->sequences_per_microbatch, b->padded_length);
	fprintf(out, "                iteration %.4f s, %.0f effective tokens/s; padding %.1f %% of computed "
		"tokens, attention waste %.3f\n\n", b->iteration_time_s, b->effective_tokens_per_s,
		100.0 * b->padding_fraction, b->attention_waste);
}

/* The header: what runs where, with which software, under which plan. */
static void
format_text_plan(FILE *out, const struct report *r)
{
	const struct plan *p = r->plan;
	const struct estimate *e = r->est;
	const struct framework *fw = r->opt ? r->opt->framework : NULL;

	fprintf(out, "%s on %s: %d of %d GPUs (%s)\n", r->model->name, r->cluster->name,
		e->gpus, cluster_gpus(r->cluster), r->cluster->gpu.name);
	fprintf(out, "software     framework %s; gpu calibration: %s\n", fw ? fw->name : "built-in",
		gpu_is_calibrated(&r->cluster->gpu) ? r->cluster->gpu.calibration : "none (spec-sheet GPU)");
	/* Another attention kernel than the GPU profile's: say how fast. */
	if (p->flash_attention &&
	    (fw ? fw->attention_speed : 1.0) * compute_attention_kernel_speed(r->cluster, p, fw) != 1.0)
		fprintf(out, "             attention kernel %s at %.2f x the GPU profile's attention speed\n",
			plan_attention_kernel_names[compute_attention_kernel(p, fw)],
			(fw ? fw->attention_speed : 1.0) * compute_attention_kernel_speed(r->cluster, p, fw));
	/* fp8attn: the fp8 recipe the plan runs (--fp8-recipe or the framework's). */
	if (p->precision == PLAN_PRECISION_FP8)
		fprintf(out, "             fp8 recipe %s%s\n", fp8_recipe_name(fp8_recipe_resolve(p, fw)),
			p->fp8_recipe == PLAN_FP8_FRAMEWORK ? " (the framework's)" : "");
	else if (p->precision == PLAN_PRECISION_FP4)
		fprintf(out, "             fp4 recipe nvfp4 (Transformer Engine's NVFP4BlockScaling)\n");
	/* plan-cli bf16ends: the layers left in bf16 (Megatron-Core's --first-last-layers-bf16). */
	if (plan_has_bf16_layers(p))
		fprintf(out, "             the first %d and last %d layers in bf16\n", p->bf16_first_layers,
			p->bf16_last_layers);
	/* A board held below its rated power (--power-limit, power_limit). */
	if (gpu_clock_factor(&r->cluster->gpu) < 1.0)
		fprintf(out, "             power limit %.0f W of %.0f W rated: compute-bound work at %.3f x the rated clock\n",
			r->cluster->gpu.power_limit_W, r->cluster->gpu.rated_power_W, gpu_clock_factor(&r->cluster->gpu));
	/* Where the job waits for its slowest GPU (gpu_pace_factor). */
	if (e->details.pace_factor > 1.0)
		fprintf(out, "             GPU time x %.3f: the slowest of %d GPUs (speed variation %.1f %%)\n",
			e->details.pace_factor, e->gpus, 100.0 * r->cluster->gpu.speed_variation);
	if (p->cp > 1)
		fprintf(out, "plan         tp %d x cp %d (%s) x pp %d x dp %d, vpp %d, micro-batch %d, global batch %d, "
			"seq-len %d\n", p->tp, p->cp, plan_cp_method_names[p->cp_method], p->pp, p->dp, p->vpp,
			p->micro_batch, p->global_batch, p->seq_len);
	else
		fprintf(out, "plan         tp %d x pp %d x dp %d, vpp %d, micro-batch %d, global batch %d, seq-len %d\n",
			p->tp, p->pp, p->dp, p->vpp, p->micro_batch, p->global_batch, p->seq_len);
	fprintf(out, "             recompute %s, sequence parallel %s, flash attention %s, ZeRO %d, "
		"dp overlap %s, dp all-reduce %s\n",
		p->custom_recompute ? "per stage" : plan_recompute_names[p->recompute],
		p->sequence_parallel ? "on" : "off",
		p->flash_attention ? "on" : "off", p->zero,
		(fw ? dp_grad_reduce_overlapped(p, fw) : p->dp_overlap != 0) ? "on" : "off",
		coll_algo_names[r->opt ? r->opt->dp_algo : COLL_ALGO_RING]);
	fprintf(out, "             %d micro-batches per pipeline, bubble %.1f %% of ideal time\n",
		e->details.microbatches, 100.0 * e->details.bubble_fraction);
}

/* Custom stages (--stage-layers, --stage-recompute, --recompute-layers):
 * the layers and recompute of each stage, after the plan line. */
static void
format_text_stages(FILE *out, const struct report *r)
{
	const struct plan *p = r->plan;

	/* plan-cli pipeline: an uneven layout shows its ranks' layers too. */
	if (!pipeline_even_layout(p) || p->custom_recompute) {
		fputs("stages      ", out);
		for (int s = 0; s < p->pp; s++)
			fprintf(out, "%s %d%s", s ? "," : "", plan_stage_layers(p, r->model, s),
				p->custom_recompute ? (const char *[]){ "", "s", "f" }[p->stage_recompute[s]] : "");
		fputs(p->custom_recompute ? "  (layers; s selective, f full recompute)\n" : "  (layers)\n", out);
	}
	if (p->custom_recompute_layers) {
		/* Slapo's checkpoint ratio (Chen et al., ASPLOS 2024). */
		fputs("recompute    full on the first", out);
		for (int s = 0; s < p->pp; s++)
			fprintf(out, "%s%d", s ? "," : " ", plan_stage_recompute_layers(p, r->model, s));
		fputs(" of", out);
		for (int s = 0; s < p->pp; s++)
			fprintf(out, "%s%d", s ? "," : " ", plan_stage_layers(p, r->model, s));
		fputs(" layers per stage; the others", out);
		for (int s = 0; s < (p->custom_recompute ? p->pp : 1); s++)
			fprintf(out, "%s%s", s ? "," : " ", plan_recompute_names[plan_stage_mode(p, r->model, s)]);
		fputc('\n', out);
	}
	/* plan-cli recomp: Megatron-Core's modules and full-recompute method. */
	if (p->recompute_modules) {
		fputs("recompute    selective stages: modules", out);
		for (int k = 0, first = 1; k < PLAN_RM_COUNT; k++)
			if (p->recompute_modules & 1 << k) {
				fprintf(out, "%s%s", first ? " " : "+", plan_recompute_module_names[k]);
				first = 0;
			}
		fputc('\n', out);
	}
	if (p->recompute_num_layers > 0)
		fprintf(out, "recompute    full stages: %s %d\n", plan_recompute_method_names[p->recompute_method],
			p->recompute_num_layers);
}

/* Where the traffic runs, the parameters, the experts and MiCS: the rest of the header. */
static void
format_text_layout(FILE *out, const struct report *r)
{
	const struct plan *p = r->plan;
	const struct estimate *e = r->est;
	const struct estimate_details *d = &e->details;

	fprintf(out, "links        TP %s, DP %s, PP %s\n",
		p->tp > 1 ? (d->tp_inter_node ? "inter-node" : "intra-node") : "-",
		p->dp > 1 ? (d->dp_inter_node ? "inter-node" : "intra-node") : "-",
		p->pp > 1 ? (d->pp_inter_node ? "inter-node" : "intra-node") : "-");
	if (e->active_parameters < e->parameters)
		fprintf(out, "parameters   %.2f B, %.2f B active per token\n", e->parameters / 1e9,
			e->active_parameters / 1e9);
	else
		fprintf(out, "parameters   %.2f B\n", e->parameters / 1e9);
	if (model_is_hybrid(r->model)) {
		/* plan-cli hybrid: what the pattern holds, each kind priced as its own. */
		static const char *const kind_names[MODEL_KIND_COUNT] = { "Mamba-2", "attention", "MLP", "MoE", "Gated DeltaNet" };
		const char *sep = "";

		fprintf(out, "layers       hybrid, %d:", r->model->layers);
		for (int k = 0; k < MODEL_KIND_COUNT; k++)
			if (model_kind_layers(r->model, k) > 0) {
				fprintf(out, "%s %d %s", sep, model_kind_layers(r->model, k), kind_names[k]);
				sep = ",";
			}
		fputc('\n', out);
	}
	if (r->model->moe.experts > 0 && r->opt && r->opt->framework &&
	    r->opt->framework->moe_dispatcher == FRAMEWORK_MOE_DISPATCH_ALLGATHER_MASK) {
		/* plan-cli review6: no all-to-all to time; its gathers are on the ep line. */
		fprintf(out, "experts      %d (top-%d) in %d MoE layers, ep %d, allgather dispatcher "
			"over tp x ep = %d ranks (no all-to-all)\n", r->model->moe.experts, r->model->moe.top_k,
			model_moe_layers(r->model), p->ep, p->tp * p->ep);
	} else if (r->model->moe.experts > 0 && r->opt && r->opt->framework &&
		   (r->opt->framework->moe_dispatcher == FRAMEWORK_MOE_DISPATCH_DEEPEP ||
		    r->opt->framework->moe_dispatcher == FRAMEWORK_MOE_DISPATCH_HYBRIDEP)) {
		struct plan local = plan_cp_local(p);

		fprintf(out, "experts      %d (top-%d) in %d MoE layers, ep %d, %s dispatcher; one dispatch "
			"%.3f ms (RDMA %.3f ms, NVLink %.3f ms, at once); buffers %.2f GiB a GPU (in memory "
			"other)\n", r->model->moe.experts,
			r->model->moe.top_k, model_moe_layers(r->model), p->ep,
			r->opt->framework->moe_dispatcher == FRAMEWORK_MOE_DISPATCH_HYBRIDEP ? "HybridEP" : "DeepEP",
			1e3 * d->ep_a2a_s, 1e3 * d->ep_inter_s, 1e3 * d->ep_intra_s,
			ep_dispatcher_buffer_bytes(r->model, &local, r->cluster, r->opt->framework) / 1073741824.0);
	} else if (r->model->moe.experts > 0) {
		fprintf(out, "experts      %d (top-%d) in %d MoE layers, ep %d, %s all-to-all%s; one all-to-all "
			"%.3f ms", r->model->moe.experts, r->model->moe.top_k, model_moe_layers(r->model), p->ep,
			plan_moe_routing_names[p->moe_routing],
			p->moe_overlap == PLAN_MOE_OVERLAP_LANCET ? ", Lancet overlap" :
			p->moe_overlap == PLAN_MOE_OVERLAP_COMBINED_1F1B ? ", combined 1F1B overlap" : "", 1e3 * d->ep_a2a_s);
		if (d->ep_inter_s > 0)
			fprintf(out, " (inter-node %.3f ms, intra-node %.3f ms)", 1e3 * d->ep_inter_s,
				1e3 * d->ep_intra_s);
		fprintf(out, "%s\n", d->ep_inter_node ? "" : ", inside one node");
	}
	if (p->mics_group > 0)
		fprintf(out, "MiCS         partition groups of %d GPUs, %d replicas, %s parameter all-gather\n",
			p->mics_group, p->dp / p->mics_group, p->mics_hierarchical ? "2-hop" : "flat");
	fputc('\n', out);
}

/* The time, the throughput and the breakdown of the iteration; false when
 * a row is not in field_table. */
/* "head dim 128 (runs as 128)", or both dims where they differ (MLA's
 * 192 / 128). */
static void
text_head_dims(FILE *out, const struct estimate_details *d)
{
	if (d->attn_head_dim_qk == d->attn_head_dim_v)
		fprintf(out, "head dim %g (runs as %g)", d->attn_head_dim_qk, d->attn_padded_head_dim_qk);
	else
		fprintf(out, "head dims %g / %g (run as %g / %g)", d->attn_head_dim_qk, d->attn_head_dim_v,
			d->attn_padded_head_dim_qk, d->attn_padded_head_dim_v);
}

static void
format_text_attn_shape(FILE *out, const struct estimate_details *d)
{
	fprintf(out, "  attention kernel %s: ", plan_attention_kernel_names[d->attn_kernel]);
	text_head_dims(out, d);
	fprintf(out, ", x %.3f forward, x %.3f backward against head dim %g, seq %g\n",
		d->attn_shape_fwd, d->attn_shape_bwd, ATTN_SHAPE_REF_HEAD_DIM, ATTN_SHAPE_REF_SEQ);
}

/* plan-cli hostsync: the training script's work per micro-batch, the
 * parts it has (iteration totals). */
static void
format_text_script_work(FILE *out, const struct estimate_details *d)
{
	const char *sep = "";

	fputs("  per micro-batch:", out);
	if (d->mb_syncs > 0) {
		fprintf(out, " %g host sync%s, %.4f s (launch)", d->mb_syncs, d->mb_syncs == 1 ? "" : "s", d->mb_sync_s);
		sep = ";";
	}
	if (d->loss_allreduce_s > 0) {
		fprintf(out, "%s loss all-reduce over DP %.4f s (overhead)", sep, d->loss_allreduce_s);
		sep = ";";
	}
	if (d->batch_copy_s > 0)
		fprintf(out, "%s attention mask copy %.4f s (overhead)", sep, d->batch_copy_s);
	fputc('\n', out);
}

static bool
format_text_time(FILE *out, const struct report *r)
{
	const struct estimate *e = r->est;
	const struct estimate_breakdown *b = &e->breakdown;
	const struct estimate_details *d = &e->details;
	double T = e->iteration_time_s;

	/* With --seq-lengths the batched iteration is the answer: it comes
	 * first (issue 26); the rows after it are the plan at --seq-len. */
	if (e->batching.on)
		fprintf(out, "batched         %.4f s an iteration of the data, %s batching, %.0f effective tokens/s "
			"(see data and batching below)\nat --seq-len %d, every sequence that long:\n",
			e->batching.iteration_time_s, seqlen_batching_names[e->batching.mode],
			e->batching.effective_tokens_per_s, r->plan->seq_len);
	fprintf(out, "iteration time  %.4f s\n", T);
	fprintf(out, "throughput      %.0f tokens/s (%.0f per GPU), %.1f TFLOP/s per GPU (model), %.1f (hardware)\n",
		e->tokens_per_s, e->tokens_per_s_per_gpu, e->tflops_per_gpu, e->hardware_tflops_per_gpu);
	fprintf(out, "utilisation     MFU %.1f %%, HFU %.1f %%\n\n", 100.0 * e->mfu, 100.0 * e->hfu);
	if (e->batching.on)
		format_text_batching(out, &e->batching);

	fprintf(out, "breakdown (stage %d sets the pace)   seconds   share\n", d->bottleneck_stage);
	if (!text_rows(out, r, breakdown_rows, T))
		return false;
	row_time(out, "total", T, T);
	fprintf(out, "  compute + recompute: gemm %.4f s, attention %.4f s, element-wise and loss %.4f s\n",
		d->compute_gemm_s, d->compute_attention_s, d->compute_other_s);
	/* Issue 25: the MoE layers' fixed costs by kind, each its own line
	 * (the router's GEMM and the permutations count in compute, the
	 * router's kernels and the synchronisation in moe_fixed, the routed
	 * experts' GEMM launches in launch). */
	if (text_applies(TEXT_IF_MOE, e))
		fprintf(out, "  moe layers: router %.4f s, token permutation %.4f s, dropless sync %.4f s, "
			"expert GEMM launches %.4f s\n",
			d->moe_router_s, d->moe_permute_s, d->moe_sync_s, d->moe_expert_launch_s);
	/* Issue 25: the partial last waves of GEMM tiles, a cost of their own
	 * (details.gemm_wave_loss_s: predict's plan, optimize's best). */
	if (d->gemm_wave_loss_known)
		fprintf(out, "  gemm wave loss: partial last waves of tiles add %.4f s (%.1f %% of the iteration)\n",
			d->gemm_wave_loss_s, T > 0 ? 100.0 * d->gemm_wave_loss_s / T : 0.0);
	/* attnshape: the fused kernel's head-dim padding and its time against
	 * the shape the GPU profile's attention efficiencies hold at. */
	if (d->attn_shape_known)
		format_text_attn_shape(out, d);
	if (d->mb_syncs > 0 || d->loss_allreduce_s > 0 || d->batch_copy_s > 0)
		format_text_script_work(out, d);
	fprintf(out, "  dp traffic %.4f s in all, %.4f s hidden behind computation\n\n",
		d->dp_total_s, d->dp_total_s - b->dp_comm > 0 ? d->dp_total_s - b->dp_comm : 0.0);
	return true;
}

bool
format_text(FILE *out, const struct report *r)
{
	const struct estimate *e = r->est;

	if (!field_report_finite(r))
		return false;
	format_text_plan(out, r);
	format_text_stages(out, r);
	format_text_layout(out, r);
	if (!format_text_time(out, r))
		return false;
	if (e->compressed)
		format_text_compression(out, r);
	fprintf(out, "memory per GPU (stage %d)      GiB\n", e->details.memory_stage);
	if (!text_rows(out, r, memory_rows, -1.0))
		return false;
	fprintf(out, "  %-12s %12.2f  of %.2f GiB: %s\n", "total", e->memory.total / 1073741824.0,
		e->memory_capacity_bytes / 1073741824.0, e->fits ? "fits" : "DOES NOT FIT");
	if (r->ckpt)
		format_text_checkpoint(out, r);
	return !ferror(out);
}
