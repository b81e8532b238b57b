/*
 * validate at the command level (issue 28): each input, written to one
 * temporary file, is the runs CSV of "plan-cli validate --format json
 * FILE", run as plan-cli runs it: the reader, a prediction per row (its
 * model, cluster and framework profiles loaded by name), the summary and
 * the JSON report. The property checked: it ends with one of the
 * documented exit statuses (plan-cli(1), EXIT STATUS), never a crash, a
 * sanitizer report or another status. The reports print: run with
 * -close_fd_mask=3.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "fuzz.h"

static const char *path;

void
fuzz_target_init(void)
{
	path = fuzz_temp_file("validate");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char a0[] = "validate", a1[] = "--format", a2[] = "json";
	char a3[4096];
	char *argv[] = { a0, a1, a2, a3, NULL };
	int rc;

	snprintf(a3, sizeof(a3), "%s", path);
	fuzz_write_file(path, data, size);
	rc = cmd_validate(4, argv);
	if (rc < CLI_EXIT_OK || rc > CLI_EXIT_THRESHOLD) {
		fprintf(stderr, "fuzz-validate: exit status %d is not a documented one\n", rc);
		abort();
	}
	return 0;
}
