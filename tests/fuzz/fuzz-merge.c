/*
 * sweep --merge at the command level (issue 28): the input, cut at its
 * first two NUL bytes, is up to three shard files of the bundled test
 * study tests/data/study-small.yaml (8 cells), merged by "plan-cli sweep
 * STUDY --merge SHARD... --format json" as plan-cli runs it. Shards are
 * input like any other file. The properties checked: the command ends
 * with a documented exit status, and when it accepts the shards the
 * table it prints has no absurd number: every number finite, every
 * iteration time from 1 us to a year (ESTIMATE_MAX_ITERATION_S), every
 * speed-up and scaling efficiency a ratio of such times. run-fuzz seeds
 * it with the study's real shards. The reports print: run with
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

#define MAX_SHARDS 3

static const char *shard[MAX_SHARDS], *out;
static char study[4096];

void
fuzz_target_init(void)
{
	shard[0] = fuzz_temp_file("merge-1");
	shard[1] = fuzz_temp_file("merge-2");
	shard[2] = fuzz_temp_file("merge-3");
	out = fuzz_temp_file("merge-out");
	snprintf(study, sizeof(study), "%s/tests/data/study-small.yaml", PLAN_SOURCE_DIR);
}

static void
absurd(long cell, const char *key, double v)
{
	fprintf(stderr, "fuzz-merge: exit 0 with cell %ld's %s = %g\n", cell, key, v);
	abort();
}

/* The figures of one merged cell: finite, and in their physical ranges. */
static void
check_cell(long i, const json_t *c)
{
	/* The smallest and largest ratio of two accepted times. */
	const double tmin = 1e-6, tmax = ESTIMATE_MAX_ITERATION_S, rmax = tmax / tmin;
	const char *key;
	const json_t *v;

	json_object_foreach((json_t *)c, key, v) {
		double d = json_number_value(v);

		if (!json_is_number(v))
			continue;
		if (!isfinite(d) || d < 0)
			absurd(i, key, d);
		if (strcmp(key, "iteration_time_s") == 0 && (d < tmin || d > tmax))
			absurd(i, key, d);
		if ((strcmp(key, "speedup") == 0 || strstr(key, "efficiency")) && (d < 1 / rmax || d > rmax))
			absurd(i, key, d);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size), *parts[MAX_SHARDS];
	char a[MAX_SHARDS + 7][4096] = { "sweep", "", "--format", "json", "--threads", "1" };
	char *argv[MAX_SHARDS + 8];
	size_t rest, i;
	int nparts = fuzz_split(text, size, parts, MAX_SHARDS, &rest), argc = 6, rc;
	json_error_t jerr;
	json_t *root, *cells, *c;

	snprintf(a[1], sizeof(a[1]), "%s", study);
	snprintf(a[argc++], sizeof(a[0]), "--merge");
	for (int k = 0; k < nparts; k++) {
		size_t len = k == nparts - 1 ? rest : strlen(parts[k]);

		fuzz_write_file(shard[k], (const uint8_t *)parts[k], len);
		snprintf(a[argc++], sizeof(a[0]), "%s", shard[k]);
	}
	for (int k = 0; k < argc; k++)
		argv[k] = a[k];
	argv[argc] = NULL;
	free(text);
	fuzz_stdout_to(out);
	rc = cmd_sweep(argc, argv);
	fuzz_stdout_restore();
	if (rc < CLI_EXIT_OK || rc > CLI_EXIT_THRESHOLD) {
		fprintf(stderr, "fuzz-merge: exit status %d is not a documented one\n", rc);
		abort();
	}
	if (rc != CLI_EXIT_OK)
		return 0;
	if (!(root = json_load_file(out, 0, &jerr))) {
		fprintf(stderr, "fuzz-merge: exit 0 but the JSON does not parse: %s\n", jerr.text);
		abort();
	}
	cells = json_object_get(root, "cells");
	json_array_foreach(cells, i, c)
		check_cell((long)i, c);
	json_decref(root);
	return 0;
}
