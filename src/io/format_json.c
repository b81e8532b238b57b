#include <math.h>

#include "plan/compression.h"
#include "io/format.h"

/* jansson refuses NaN and infinities; a formatter must not pass them. */
static int
set_num(json_t *obj, const char *key, double v)
{
	return json_object_set_new(obj, key, json_real(isfinite(v) ? v : 0.0));
}

static int
set_int(json_t *obj, const char *key, long v)
{
	return json_object_set_new(obj, key, json_integer(v));
}

static json_t *
bytes_object(const struct estimate_bytes *b)
{
	return json_pack("{s:f, s:f, s:f, s:f}", "tp", isfinite(b->tp) ? b->tp : 0.0,
			 "pp", isfinite(b->pp) ? b->pp : 0.0, "dp", isfinite(b->dp) ? b->dp : 0.0,
			 "ep", isfinite(b->ep) ? b->ep : 0.0);
}

json_t *
format_json_object(const struct report *r)
{
	const struct plan *p = r->plan;
	const struct estimate *e = r->est;
	const struct estimate_breakdown *b = &e->breakdown;
	const struct estimate_details *d = &e->details;
	json_t *root = json_object(), *plan = json_object(), *bd = json_object();
	json_t *mem = json_object(), *det = json_object();
	int rc = 0;

	if (!root || !plan || !bd || !mem || !det) {
		json_decref(root);
		json_decref(plan);
		json_decref(bd);
		json_decref(mem);
		json_decref(det);
		return NULL;
	}
	rc |= set_int(plan, "tp", p->tp);
	rc |= set_int(plan, "pp", p->pp);
	rc |= set_int(plan, "dp", p->dp);
	rc |= set_int(plan, "vpp", p->vpp);
	rc |= set_int(plan, "micro_batch", p->micro_batch);
	rc |= set_int(plan, "global_batch", p->global_batch);
	rc |= set_int(plan, "seq_len", p->seq_len);
	rc |= json_object_set_new(plan, "recompute", json_string(plan_recompute_names[p->recompute]));
	rc |= json_object_set_new(plan, "sequence_parallel", json_boolean(p->sequence_parallel));
	rc |= json_object_set_new(plan, "flash_attention", json_boolean(p->flash_attention));
	rc |= set_int(plan, "zero", p->zero);
	rc |= json_object_set_new(plan, "dp_overlap", json_boolean(p->dp_overlap));
	rc |= set_int(plan, "ep", p->ep);
	rc |= json_object_set_new(plan, "moe_routing", json_string(plan_moe_routing_names[p->moe_routing]));
	rc |= json_object_set_new(plan, "moe_overlap", json_string(plan_moe_overlap_names[p->moe_overlap]));
	rc |= set_int(plan, "mics_group", p->mics_group);
	{
		json_t *layers = json_array(), *rec = json_array();

		if (!layers || !rec) {
			json_decref(layers);
			json_decref(rec);
			rc = -1;
		} else {
			for (int s = 0; s < p->pp && s < PLAN_MAX_STAGES; s++) {
				rc |= json_array_append_new(layers, json_integer(plan_stage_layers(p, r->model, s)));
				rc |= json_array_append_new(rec, json_string(plan_recompute_names[plan_stage_recompute(p, s)]));
			}
			rc |= json_object_set_new(plan, "stage_layers", layers);
			rc |= json_object_set_new(plan, "stage_recompute", rec);
		}
	}
	rc |= json_object_set_new(plan, "mics_hierarchical", json_boolean(p->mics_hierarchical));
	rc |= json_object_set_new(plan, "dp_allreduce",
				  json_string(coll_algo_names[r->opt ? r->opt->dp_algo : COLL_ALGO_RING]));

	rc |= set_num(bd, "compute", b->compute);
	rc |= set_num(bd, "recompute", b->recompute);
	rc |= set_num(bd, "tp_comm", b->tp_comm);
	rc |= set_num(bd, "pp_comm", b->pp_comm);
	rc |= set_num(bd, "pp_bubble", b->pp_bubble);
	rc |= set_num(bd, "dp_comm", b->dp_comm);
	rc |= set_num(bd, "optimizer", b->optimizer);
	rc |= set_num(bd, "compression", b->compression);
	rc |= set_num(bd, "ep_comm", b->ep_comm);

	rc |= set_num(mem, "weights", e->memory.weights);
	rc |= set_num(mem, "gradients", e->memory.gradients);
	rc |= set_num(mem, "optimizer", e->memory.optimizer);
	rc |= set_num(mem, "activations", e->memory.activations);
	rc |= set_num(mem, "other", e->memory.other);
	rc |= set_num(mem, "compression", e->memory.compression);
	rc |= set_num(mem, "total", e->memory.total);

	rc |= set_int(det, "microbatches", d->microbatches);
	rc |= set_num(det, "bubble_fraction", d->bubble_fraction);
	rc |= set_num(det, "layer_forward_s", d->layer_fwd_s);
	rc |= set_num(det, "layer_backward_s", d->layer_bwd_s);
	rc |= set_num(det, "tp_collective_s", d->tp_collective_s);
	rc |= set_num(det, "pp_p2p_per_microbatch_s", d->pp_p2p_s);
	rc |= set_num(det, "dp_total_s", d->dp_total_s);
	rc |= set_num(det, "dp_overlap_window_s", d->dp_overlap_window_s);
	rc |= set_num(det, "slot_s", d->slot_s);
	rc |= set_int(det, "bottleneck_stage", d->bottleneck_stage);
	rc |= set_int(det, "tail_stage", d->tail_stage);
	rc |= set_int(det, "memory_stage", d->memory_stage);
	rc |= json_object_set_new(det, "tp_inter_node", json_boolean(d->tp_inter_node));
	rc |= json_object_set_new(det, "dp_inter_node", json_boolean(d->dp_inter_node));
	rc |= json_object_set_new(det, "pp_inter_node", json_boolean(d->pp_inter_node));
	rc |= json_object_set_new(root, "bytes_per_iteration", bytes_object(&e->bytes));
	rc |= json_object_set_new(root, "uncompressed_bytes_per_iteration", bytes_object(&e->uncompressed_bytes));
	rc |= json_object_set_new(root, "compressor",
				  r->compressor ? json_string(r->compressor->name) : json_null());
	{
		json_t *cp = json_object();
		const struct plan_compression *pc = &p->compress;

		if (!cp) {
			rc = -1;
		} else {
			rc |= json_object_set_new(cp, "tp", json_boolean(e->compressed && pc->tp));
			rc |= json_object_set_new(cp, "pp", json_boolean(e->compressed && pc->pp));
			rc |= json_object_set_new(cp, "dp", json_boolean(e->compressed && pc->dp));
			rc |= set_int(cp, "from_layer", plan_compress_from_layer(p, r->model));
			rc |= set_int(cp, "from_stage", pc->from_stage);
			rc |= json_object_set_new(cp, "dp_scheme", json_string(compress_dp_scheme_names[pc->dp_scheme]));
			rc |= json_object_set_new(cp, "dp_on", json_string(pc->dp_on_cpu ? "cpu" : "gpu"));
			rc |= json_object_set_new(plan, "compression", cp);
		}
	}
	rc |= set_num(root, "uncompressed_iteration_time_s", e->uncompressed_iteration_time_s);
	rc |= set_num(root, "compression_speedup", e->compression_speedup);
	rc |= set_int(det, "compressed_layers", e->details.compressed_layers);
	rc |= set_int(det, "moe_layers", e->details.moe_layers);
	rc |= json_object_set_new(det, "dp_compress_scheme",
				  json_string(e->compressed && p->compress.dp ?
					      compress_dp_scheme_names[e->details.dp_compress_scheme] : "none"));
	rc |= set_num(det, "ep_alltoall_s", e->details.ep_a2a_s);
	rc |= set_num(det, "ep_alltoall_inter_s", e->details.ep_inter_s);
	rc |= set_num(det, "ep_alltoall_intra_s", e->details.ep_intra_s);
	rc |= set_num(det, "ep_total_s", e->details.ep_total_s);
	rc |= json_object_set_new(det, "ep_inter_node", json_boolean(e->details.ep_inter_node));
	rc |= set_num(det, "compression_parameters", e->details.compression_params);

	rc |= json_object_set_new(root, "model", json_string(r->model->name));
	rc |= json_object_set_new(root, "cluster", json_string(r->cluster->name));
	rc |= set_int(root, "gpus", e->gpus);
	rc |= json_object_set_new(root, "plan", plan);
	rc |= set_num(root, "parameters", e->parameters);
	rc |= set_num(root, "active_parameters", e->active_parameters);
	rc |= set_num(root, "iteration_time_s", e->iteration_time_s);
	rc |= json_object_set_new(root, "breakdown_s", bd);
	rc |= json_object_set_new(root, "memory_bytes", mem);
	rc |= set_num(root, "memory_capacity_bytes", e->memory_capacity_bytes);
	rc |= json_object_set_new(root, "fits", json_boolean(e->fits));
	rc |= set_num(root, "model_flops_per_iteration", e->model_flops_per_iteration);
	rc |= set_num(root, "hardware_flops_per_iteration", e->hardware_flops_per_iteration);
	rc |= set_num(root, "tflops_per_gpu", e->tflops_per_gpu);
	rc |= set_num(root, "hardware_tflops_per_gpu", e->hardware_tflops_per_gpu);
	rc |= set_num(root, "mfu", e->mfu);
	rc |= set_num(root, "hfu", e->hfu);
	rc |= set_num(root, "tokens_per_s", e->tokens_per_s);
	rc |= json_object_set_new(root, "details", det);
	if (rc != 0) {
		json_decref(root);
		return NULL;
	}
	return root;
}

bool
format_json(FILE *out, const struct report *r)
{
	json_t *obj = format_json_object(r);
	int rc;

	if (!obj)
		return false;
	rc = json_dumpf(obj, out, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
	json_decref(obj);
	if (rc != 0)
		return false;
	fputc('\n', out);
	return !ferror(out);
}
