/*
 * predict at the command level, option vectors and files together (issue
 * 28): the input cut at NUL bytes is a file, then up to 48 arguments of
 * "plan-cli predict --format json ARG...", run as plan-cli runs it; an
 * argument FILE stands for the file (written to a temporary path), so
 * that one input gives a profile, a runs or length CSV and the options
 * that use it (--model FILE, --cluster FILE, --seq-lengths FILE, ...).
 * The properties checked: the command ends with a documented exit
 * status, and when it succeeds its JSON parses, every number in it
 * finite and the iteration time above 0 and at most a year
 * (ESTIMATE_MAX_ITERATION_S). run-fuzz seeds it with bundled profiles
 * and command lines that use them. The reports print: run with
 * -close_fd_mask=3.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "plan/estimate.h"
#include "fuzz.h"

#define MAX_ARGS 48

static const char *file, *out;

void
fuzz_target_init(void)
{
	file = fuzz_temp_file("predict-file");
	out = fuzz_temp_file("predict-out");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size), *parts[MAX_ARGS + 1], *argv[MAX_ARGS + 4];
	char a0[] = "predict", a1[] = "--format", a2[] = "json", path[4096];
	size_t rest;
	int nparts = fuzz_split(text, size, parts, MAX_ARGS + 1, &rest), argc = 0, rc;
	json_error_t jerr;
	json_t *root, *t;

	/* The first part is the file; with no NUL the whole input is. */
	fuzz_write_file(file, (const uint8_t *)parts[0], nparts > 1 ? strlen(parts[0]) : rest);
	snprintf(path, sizeof(path), "%s", file);
	argv[argc++] = a0;
	argv[argc++] = a1;
	argv[argc++] = a2;
	for (int i = 1; i < nparts; i++)
		argv[argc++] = strcmp(parts[i], "FILE") == 0 ? path : parts[i];
	argv[argc] = NULL;
	fuzz_stdout_to(out);
	rc = cmd_predict(argc, argv);
	fuzz_stdout_restore();
	free(text);
	/* 4: the plan does not fit (predict's documented status). */
	if (rc < CLI_EXIT_OK || rc > CLI_EXIT_THRESHOLD) {
		fprintf(stderr, "fuzz-predict: exit status %d is not a documented one\n", rc);
		abort();
	}
	if (rc != CLI_EXIT_OK)
		return 0;
	if (!(root = json_load_file(out, 0, &jerr))) {
		/* --help prints text, and exits 0. */
		return 0;
	}
	fuzz_check_json_finite("fuzz-predict", root);
	t = json_object_get(root, "iteration_time_s");
	if (json_is_number(t) && !(json_number_value(t) > 0 && json_number_value(t) <= ESTIMATE_MAX_ITERATION_S)) {
		fprintf(stderr, "fuzz-predict: exit 0 with an iteration time of %g s\n", json_number_value(t));
		abort();
	}
	json_decref(root);
	return 0;
}
