/*
 * validate's CSV reader on any bytes. runs_csv_load reads a path, so each
 * input is written to one temporary file made at start-up.
 */
#include <stdlib.h>

#include "io/runs_csv.h"
#include "fuzz.h"

static const char *path;

void
fuzz_target_init(void)
{
	path = fuzz_temp_file("runs");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run_set set = { 0 };
	struct plan_error err;

	fuzz_write_file(path, data, size);
	plan_error_clear(&err);
	runs_csv_load(path, &set, &err);
	runs_csv_release(&set);
	return 0;
}
