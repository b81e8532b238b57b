/*
 * validate's CSV reader on any bytes. runs_csv_load reads a path, so each
 * input is written to one temporary file made at start-up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "io/runs_csv.h"
#include "fuzz.h"

static char path[4096];

static void
remove_file(void)
{
	unlink(path);
}

void
fuzz_target_init(void)
{
	const char *tmp = getenv("TMPDIR");
	int fd;

	snprintf(path, sizeof(path), "%s/plan-fuzz-runs-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if ((fd = mkstemp(path)) < 0) {
		perror(path);
		abort();
	}
	close(fd);
	atexit(remove_file);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	struct run_set set = { 0 };
	struct plan_error err;

	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
		perror(path);
		abort();
	}
	plan_error_clear(&err);
	runs_csv_load(path, &set, &err);
	runs_csv_release(&set);
	return 0;
}
