/*
 * fit-logs at the command level (issue 28): each input, written to one
 * temporary file, goes through cli_fit_gemm (--gemm FILE --gpu
 * h100-sxm5-80gb) and cli_fit_nccl (--nccl-tests FILE, no --cluster), both
 * with --format json and --output, as plan-cli runs them. The property
 * checked: whatever the command writes loads back. Exit 0 means the
 * profile or block was written, and it loads as the loaders load it (the
 * GPU profile by gpu_load_file, the link block in a cluster beside the
 * other link); anything else aborts. The reports print: run with
 * -close_fd_mask=3.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/options.h"
#include "io/profile_load.h"
#include "fuzz.h"

static const char *in, *out;

void
fuzz_target_init(void)
{
	in = fuzz_temp_file("fit-logs-in");
	out = fuzz_temp_file("fit-logs-out");
}

static void
check_gemm(void)
{
	struct fit_logs_request r = { .format = CLI_FORMAT_JSON, .level = -1, .gemm = in,
				      .gpu = "h100-sxm5-80gb", .output = out };
	struct plan_error err;
	struct gpu g;

	unlink(out);
	if (cli_fit_gemm(&r) != CLI_EXIT_OK)
		return;
	plan_error_clear(&err);
	if (!gpu_load_file(&g, out, &err)) {
		fprintf(stderr, "fuzz-fit-logs: the GPU profile written does not load: %s\n", err.message);
		abort();
	}
}

static void
check_nccl(void)
{
	const char *files[1] = { in };
	struct fit_logs_request r = { .format = CLI_FORMAT_JSON, .nccl = true, .level = -1, .output = out };
	struct plan_error err;
	struct cluster c;
	char *block, *text;
	size_t size;

	unlink(out);
	if (cli_fit_nccl(files, 1, &r) != CLI_EXIT_OK)
		return;
	if (!(block = fuzz_slurp(out))) {
		fprintf(stderr, "fuzz-fit-logs: exit 0 but no block written\n");
		abort();
	}
	/* The block first (its line numbers as in the file), then the rest
	 * of a cluster: the link it does not give (YAML refuses a key twice). */
	size = strlen(block) + 512;
	if (!(text = malloc(size)))
		abort();
	snprintf(text, size, "%sname: t\nnodes: 2\ngpus_per_node: 8\ngpu: h100-sxm5-80gb\n%s", block,
		 strstr(block, "\nintra_node:") ? "inter_node: {nics_per_node: 8, nic_bandwidth: 400 Gbit/s}\n" :
						  "intra_node: {bandwidth: 450 GB/s}\n");
	plan_error_clear(&err);
	if (!cluster_load_string(&c, out, text, &err)) {
		fprintf(stderr, "fuzz-fit-logs: the link block written does not load: %s\n", err.message);
		abort();
	}
	cluster_release(&c);
	free(text);
	free(block);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_write_file(in, data, size);
	check_gemm();
	check_nccl();
	return 0;
}
