/* GEMM timings as scripts/measure-gpu.py writes them: a CSV with the columns m, n, k, dtype, seconds. */
#pragma once

#include <stdbool.h>

#include "plan/error.h"
#include "plan/fit_gemm.h"

/**
 * Read the CSV file @path: a header naming m, n, k, dtype and seconds
 * (in any order; other columns are an error that lists these), then one
 * GEMM a row: whole sizes, dtype bf16, fp16 or fp8, seconds per kernel.
 * On success *@pts (the caller frees it) holds *@n points.
 */
bool gemm_log_load(const char *path, struct fit_gemm_point **pts, int *n, struct plan_error *err);
