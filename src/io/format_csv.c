#include <csv.h>
#include <string.h>

#include "io/format.h"

static const char *const columns[] = {
	"model", "cluster", "gpus", "tp", "pp", "dp", "vpp", "micro_batch", "global_batch",
	"seq_len", "recompute", "sequence_parallel", "flash_attention", "zero", "dp_overlap",
	"dp_allreduce", "parameters", "iteration_time_s",
	"compute_s", "recompute_s", "tp_comm_s", "pp_comm_s", "pp_bubble_s", "dp_comm_s",
	"optimizer_s", "memory_total_bytes", "memory_capacity_bytes", "fits", "tflops_per_gpu",
	"mfu", "tokens_per_s", "compressor", "compression_s", "uncompressed_iteration_time_s",
	"compression_speedup", "ep", "moe_routing", "ep_comm_s", "active_parameters", "mics_group", NULL,
};

/* Text fields go through libcsv's writer so that quoting follows RFC 4180. */
static void
text_field(FILE *out, const char *s)
{
	csv_fwrite(out, s, strlen(s));
}

bool
format_csv_header(FILE *out)
{
	for (int i = 0; columns[i]; i++) {
		if (i)
			fputc(',', out);
		fputs(columns[i], out);
	}
	fputs("\r\n", out);
	return !ferror(out);
}

bool
format_csv_row(FILE *out, const struct report *r)
{
	const struct plan *p = r->plan;
	const struct estimate *e = r->est;
	const struct estimate_breakdown *b = &e->breakdown;

	text_field(out, r->model->name);
	fputc(',', out);
	text_field(out, r->cluster->name);
	fprintf(out, ",%d,%d,%d,%d,%d,%d,%d,%d,%s,%s,%s,%d,%s,%s,%.0f,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.0f,%.0f,%s,%.6g,%.6g,%.6g,",
		e->gpus, p->tp, p->pp, p->dp, p->vpp, p->micro_batch, p->global_batch, p->seq_len,
		plan_recompute_names[p->recompute], p->sequence_parallel ? "true" : "false",
		p->flash_attention ? "true" : "false", p->zero, p->dp_overlap ? "true" : "false",
		coll_algo_names[r->opt ? r->opt->dp_algo : COLL_ALGO_RING],
		e->parameters, e->iteration_time_s, b->compute, b->recompute, b->tp_comm, b->pp_comm,
		b->pp_bubble, b->dp_comm, b->optimizer, e->memory.total, e->memory_capacity_bytes,
		e->fits ? "true" : "false", e->tflops_per_gpu, e->mfu, e->tokens_per_s);
	text_field(out, r->compressor && e->compressed ? r->compressor->name : "");
	fprintf(out, ",%.9g,%.9g,%.6g,%d,%s,%.9g,%.0f,%d\r\n", b->compression,
		e->uncompressed_iteration_time_s, e->compression_speedup, p->ep,
		plan_moe_routing_names[p->moe_routing], b->ep_comm, e->active_parameters, p->mics_group);
	return !ferror(out);
}
