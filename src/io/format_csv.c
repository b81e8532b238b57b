#include <csv.h>
#include <string.h>

#include "io/fields.h"
#include "io/format.h"

/* The columns, in order: field_table gives each its value and format, so
 * that the header and the record cannot drift apart. Scripts may read them by
 * position, so a new column goes at the end; a new term of the breakdown
 * (ESTIMATE_BREAKDOWN_TERMS) too, and test-fields fails until it is here. */
static const char *const columns[] = {
	"model", "cluster", "gpus", "tp", "pp", "dp", "vpp", "micro_batch", "global_batch",
	"seq_len", "recompute", "sequence_parallel", "flash_attention", "zero", "dp_overlap",
	"dp_allreduce", "parameters", "iteration_time_s",
	"compute_s", "recompute_s", "tp_comm_s", "pp_comm_s", "pp_bubble_s", "dp_comm_s",
	"optimizer_s", "memory_total_bytes", "memory_capacity_bytes", "fits", "tflops_per_gpu",
	"mfu", "tokens_per_s", "compressor", "compression_s", "uncompressed_iteration_time_s",
	"compression_speedup", "ep", "moe_routing", "ep_comm_s", "active_parameters", "mics_group",
	"gpu", "framework", "overhead_s", "compute_gemm_s", "compute_attention_s", "compute_other_s",
	"precision", "tp_overlap", "cp", "cp_comm_s", "launch_s", "moe_fixed_s",
	"moe_router_s", "moe_permute_s", "moe_sync_s", "moe_expert_launch_s", "gemm_wave_loss_s",
	"offload_s", "microbatch_host_syncs", "microbatch_sync_s", "loss_allreduce_s", "attention_mask_copy_s",
	NULL,
};

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

/* Text fields go through libcsv's writer so that quoting follows RFC 4180;
 * keywords are written bare. */
static void
csv_value(FILE *out, const struct field *f, const struct field_value *v)
{
	switch (v->type) {
	case FIELD_INT: fprintf(out, "%ld", v->i); break;
	case FIELD_NUM: fprintf(out, f->csv_format, v->d); break;
	case FIELD_BOOL: fputs(v->b ? "true" : "false", out); break;
	case FIELD_NAME: fputs(v->s, out); break;
	case FIELD_TEXT: csv_fwrite(out, v->s ? v->s : "", strlen(v->s ? v->s : "")); break;
	}
}

bool
format_csv_row(FILE *out, const struct report *r)
{
	if (!field_report_finite(r))
		return false;
	for (int i = 0; columns[i]; i++) {
		const struct field *f = field_find_csv(columns[i]);
		struct field_value v;

		if (!f)
			return false;
		if (i)
			fputc(',', out);
		/* A figure the report does not have (gemm_wave_loss_s where no
		 * second estimate ran) is empty, not a 0 that reads as none. */
		if (!field_present(f, r))
			continue;
		field_get(f, r, 0, &v);
		csv_value(out, f, &v);
	}
	fputs("\r\n", out);
	return !ferror(out);
}
