/*
 * calibrate at the command level (issue 28): each input, written to one
 * temporary file, is the runs CSV of "plan-cli calibrate --runs FILE
 * --cluster mosaicml-a100-40gb --output C --framework-output F --format
 * json", with --fit gpu.gemm_efficiency_max,framework.layer_overhead for
 * inputs of even length and the default keys (no framework output) for
 * the others, run as plan-cli runs it: the runs read and predicted, the
 * GSL fit, the cross-validation and the profiles written. The
 * properties checked: it ends with a documented exit status, and exit 0
 * means the profiles were written and load as the loaders load them,
 * with their schemas and cross-key checks (cluster_load_file,
 * framework_load_file). run-fuzz seeds it with tests/data/mosaic-five.csv
 * (five runs on that cluster). The reports print: run with
 * -close_fd_mask=3.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "io/profile_load.h"
#include "fuzz.h"

static const char *in, *cl, *fw;

void
fuzz_target_init(void)
{
	in = fuzz_temp_file("calibrate-runs");
	cl = fuzz_temp_file("calibrate-cluster");
	fw = fuzz_temp_file("calibrate-framework");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char a[12][4096] = { "calibrate", "--runs", "", "--cluster", "mosaicml-a100-40gb", "--format", "json",
			     "--output", "", "--fit", "gpu.gemm_efficiency_max,framework.layer_overhead",
			     "--framework-output" };
	char f[4096], *argv[14];
	bool framework = size % 2 == 0;
	int argc = framework ? 13 : 9, rc;
	struct plan_error err;
	struct cluster c;
	struct framework w;

	snprintf(a[2], sizeof(a[2]), "%s", in);
	snprintf(a[8], sizeof(a[8]), "%s", cl);
	snprintf(f, sizeof(f), "%s", fw);
	for (int i = 0; i < 12; i++)
		argv[i] = a[i];
	argv[12] = f;
	argv[argc] = NULL;
	fuzz_write_file(in, data, size);
	unlink(cl);
	unlink(fw);
	rc = cmd_calibrate(argc, argv);
	if (rc < CLI_EXIT_OK || rc > CLI_EXIT_THRESHOLD) {
		fprintf(stderr, "fuzz-calibrate: exit status %d is not a documented one\n", rc);
		abort();
	}
	if (rc != CLI_EXIT_OK)
		return 0;
	plan_error_clear(&err);
	if (!cluster_load_file(&c, cl, &err)) {
		fprintf(stderr, "fuzz-calibrate: the cluster profile written does not load: %s\n", err.message);
		abort();
	}
	cluster_release(&c);
	if (framework && !framework_load_file(&w, fw, &err)) {
		fprintf(stderr, "fuzz-calibrate: the framework profile written does not load: %s\n", err.message);
		abort();
	}
	return 0;
}
