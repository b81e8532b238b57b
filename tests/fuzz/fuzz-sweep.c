/*
 * sweep at the command level (issue 28): each input, written to one
 * temporary file, is the study of "plan-cli sweep FILE --mode predict
 * --max-cells 16 --threads 1 --shard 1/1 --format json", run as plan-cli
 * runs it: the study loader, the cell cap, the cells built from the
 * axes (profiles loaded by name) and at most 16 cell predictions. The
 * --max-cells and --mode options keep each input's work bounded, as the
 * cap keeps a user's. The properties checked: the command ends with a
 * documented exit status; when it succeeds its JSON, every number of it
 * finite, merges back (sweep FILE --merge OUT, the reader of shards)
 * with exit 0. The reports print: run with -close_fd_mask=3.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "fuzz.h"

static const char *study, *out;

void
fuzz_target_init(void)
{
	study = fuzz_temp_file("sweep-study");
	out = fuzz_temp_file("sweep-out");
}

/* plan-cli sweep STUDY [--merge OUT] with the bounding options; stdout to @to. */
static int
run(bool merge, const char *to)
{
	char a[12][4096] = { "sweep", "", "--mode", "predict", "--max-cells", "16", "--threads", "1",
			     "--format", "json", "", "" };
	char *argv[13];
	int argc = 10, rc;

	snprintf(a[1], sizeof(a[1]), "%s", study);
	if (merge) {
		snprintf(a[10], sizeof(a[10]), "--merge");
		snprintf(a[11], sizeof(a[11]), "%s", out);
		argc = 12;
	} else {
		snprintf(a[10], sizeof(a[10]), "--shard");
		snprintf(a[11], sizeof(a[11]), "1/1");
		argc = 12;
	}
	for (int i = 0; i < argc; i++)
		argv[i] = a[i];
	argv[argc] = NULL;
	fuzz_stdout_to(to);
	rc = cmd_sweep(argc, argv);
	fuzz_stdout_restore();
	if (rc < CLI_EXIT_OK || rc > CLI_EXIT_THRESHOLD) {
		fprintf(stderr, "fuzz-sweep: exit status %d is not a documented one\n", rc);
		abort();
	}
	return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_error_t jerr;
	json_t *root;

	fuzz_write_file(study, data, size);
	if (run(false, out) != CLI_EXIT_OK)
		return 0;
	if (!(root = json_load_file(out, 0, &jerr))) {
		fprintf(stderr, "fuzz-sweep: exit 0 but the JSON does not parse: %s\n", jerr.text);
		abort();
	}
	fuzz_check_json_finite("fuzz-sweep", root);
	json_decref(root);
	if (run(true, "/dev/null") != CLI_EXIT_OK) {
		fprintf(stderr, "fuzz-sweep: the sweep's own shard does not merge back\n");
		abort();
	}
	return 0;
}
